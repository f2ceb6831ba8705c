"""CLI task of RankSVM: ``--task rank`` on SVMlight ranking files (``<relevance> qid:<q> ...``).

::

    cutplane train --task rank --train TRAIN.svm --model M.npz [--C 1] [--eps E] [--zero-based auto|yes|no]
    cutplane evaluate --model M.npz --test TEST.svm     # NDCG@10 and pairwise accuracy, percent

The files are read by :func:`problems.io.svmlight.read_svmlight_ranking` (a malformed ``qid`` is
refused naming the file and line); the test file is read with the model's index base and width.
"""

from __future__ import annotations

from cutplane.exceptions import InputError
from problems.command_options import Task

__all__ = ["RANK", "train_rank", "evaluate_rank"]


def train_rank(args):
    """``--task rank``: a :class:`~problems.linear.rank_svm.RankSVM`; returns it and its report."""
    from problems.io.svmlight import read_svmlight_ranking
    from problems.linear.command import ZERO_BASED, make_solver
    from problems.linear.rank_svm import RankSVM
    from problems.metrics.ranking import ndcg_at_k, pairwise_accuracy

    if getattr(args, "C_grid", False):
        raise InputError("--task rank trains one C: give one --C value", field="--C")
    if getattr(args, "dev", None) is not None or getattr(args, "dev_fraction", None) is not None:
        raise InputError("--task rank takes no --dev / --dev-fraction (one C is trained)", field="--dev")
    if args.executor not in (None, "serial") or args.scheduler is not None:
        raise InputError("the ranking oracle runs in this process: no --executor / --scheduler", field="--executor")
    args.executor, args.workers = None, None
    data = read_svmlight_ranking(args.train, zero_based=ZERO_BASED[getattr(args, "zero_based", "auto")])
    est = RankSVM(C=float(args.C), regularizer=args.regularizer, solver=make_solver(args, method=args.method))
    est.fit(data.X, data.y, data.qid)
    scores = est.decision_function(data.X)
    res = est.result_
    report = {
        "objective": est.objective_,
        "lower_bound": est.lower_bound_,
        "gap": est.gap_,
        "iterations": est.n_iter_,
        "status": res.status,
        "time_s": float(res.time_s),
        "C": float(args.C),
        "n_samples": int(data.X.shape[0]),
        "n_queries": 1 if data.qid is None else int(len(set(data.qid.tolist()))),
        "n_pairs": int(est.n_pairs_),
        "zero_based": bool(data.zero_based),
        "train_ndcg@10": 100.0 * ndcg_at_k(data.y, scores, data.qid, k=10),
        "train_pairwise_accuracy": 100.0 * pairwise_accuracy(data.y, scores, data.qid),
    }
    return est, report


def evaluate_rank(model_path, test_path, args=None) -> dict:
    """NDCG@10 and pairwise accuracy (percent) of a ``--task rank`` model on a ranking file."""
    from problems.io.svmlight import read_svmlight_ranking
    from problems.linear.rank_svm import RankSVM
    from problems.metrics.ranking import ndcg_at_k, pairwise_accuracy
    from problems.model_io import load_model

    est = RankSVM.load(model_path)
    _, meta = load_model(model_path)
    base = bool((meta.get("report") or {}).get("zero_based", False))
    data = read_svmlight_ranking(test_path, est.n_features_in_, zero_based=base)
    scores = est.decision_function(data.X)
    return {
        "ndcg@10": 100.0 * ndcg_at_k(data.y, scores, data.qid, k=10),
        "pairwise_accuracy": 100.0 * pairwise_accuracy(data.y, scores, data.qid),
        "n_samples": int(data.X.shape[0]),
        "n_queries": 1 if data.qid is None else int(len(set(data.qid.tolist()))),
    }


#: ``--task rank``.
RANK = Task("RankSVM: pairwise hinge within queries (SVMlight qid: files)", train_rank, evaluate=evaluate_rank)
