"""Task oracles: loss-augmented argmax, risk value and subgradient for one task each."""
