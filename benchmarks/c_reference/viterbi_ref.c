/* Reference C implementation of the loss-augmented first-order Viterbi oracle.
 *
 * Written for benchmarks/viterbi_throughput.py: the same inputs as oracles/sequence.py, in
 * plain C (no SIMD intrinsics, no threads), so our numba code can be compared with a compiled
 * implementation measured on the same machine in the same run.
 *
 * Conventions (as in oracles/viterbi.py): score(y) = sum_t unary[t, y_t] + sum_t trans[y_{t-1}, y_t],
 * Hamming loss added as +1 on every label != y_true[t]; ties go to the lowest label both at the
 * end and when backtracking (strict '>' while scanning labels upwards).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Viterbi on one sentence of T tokens; trans_t[b * K + a] = transition[a, b]. Returns the best score. */
double viterbi_sentence(const double *unary, int64_t T, int64_t K, const double *trans_t,
                        const int32_t *y, int augment, double *score, int32_t *back, int32_t *out)
{
    if (T == 0) return 0.0;
    for (int64_t k = 0; k < K; k++)
        score[k] = unary[k] + ((augment && k != y[0]) ? 1.0 : 0.0);
    for (int64_t t = 1; t < T; t++) {
        const double *prev = score + (t - 1) * K;
        for (int64_t b = 0; b < K; b++) {
            const double *row = trans_t + b * K;
            double best = prev[0] + row[0];
            int32_t arg = 0;
            for (int64_t a = 1; a < K; a++) {
                double v = prev[a] + row[a];
                if (v > best) { best = v; arg = (int32_t)a; }
            }
            double u = unary[t * K + b];
            if (augment && b != y[t]) u += 1.0;
            score[t * K + b] = best + u;
            back[t * K + b] = arg;
        }
    }
    const double *last = score + (T - 1) * K;
    double best = last[0];
    int32_t arg = 0;
    for (int64_t k = 1; k < K; k++)
        if (last[k] > best) { best = last[k]; arg = (int32_t)k; }
    out[T - 1] = arg;
    for (int64_t t = T - 1; t > 0; t--) out[t - 1] = back[t * K + out[t]];
    return best;
}

/* Kernel alone: augmented Viterbi over all sentences on precomputed unary scores (n_tokens, K). */
void viterbi_all(const double *unary, const int64_t *sent_ptr, int64_t n_sent, int64_t K,
                 const double *trans_t, const int32_t *y, int32_t *yhat)
{
    int64_t max_len = 0;
    for (int64_t i = 0; i < n_sent; i++)
        if (sent_ptr[i + 1] - sent_ptr[i] > max_len) max_len = sent_ptr[i + 1] - sent_ptr[i];
    double *score = malloc(sizeof(double) * (max_len + 1) * K);
    int32_t *back = malloc(sizeof(int32_t) * (max_len + 1) * K);
    for (int64_t i = 0; i < n_sent; i++) {
        int64_t t0 = sent_ptr[i], T = sent_ptr[i + 1] - t0;
        viterbi_sentence(unary + t0 * K, T, K, trans_t, y + t0, 1, score, back, yhat + t0);
    }
    free(score);
    free(back);
}

/* The full 1-slack oracle: per sentence, unary = sum of W rows of the token's feature ids,
 * augmented Viterbi, then integer counts of Phi(x, y^) - Phi(x, y) into a dense (n_features + K) x K
 * table (rows n_features.. hold the transitions); finally the nonzero counts are listed in
 * increasing coordinate order (the sparse cut, as ours). Returns the number of nonzeros written to
 * idx/val (capacity nnz_cap); *loss receives the summed Hamming loss. */
int64_t oracle_all(const double *W, const double *trans, int64_t n_features, int64_t K,
                   const int64_t *indptr, const int32_t *indices, const int64_t *sent_ptr, int64_t n_sent,
                   const int32_t *y, int32_t *yhat, int64_t *idx, double *val, int64_t nnz_cap, double *loss)
{
    int64_t max_len = 0;
    for (int64_t i = 0; i < n_sent; i++)
        if (sent_ptr[i + 1] - sent_ptr[i] > max_len) max_len = sent_ptr[i + 1] - sent_ptr[i];
    double *unary = malloc(sizeof(double) * (max_len + 1) * K);
    double *score = malloc(sizeof(double) * (max_len + 1) * K);
    int32_t *back = malloc(sizeof(int32_t) * (max_len + 1) * K);
    double *trans_t = malloc(sizeof(double) * K * K);
    int32_t *acc = calloc((size_t)(n_features + K) * K, sizeof(int32_t));
    for (int64_t a = 0; a < K; a++)
        for (int64_t b = 0; b < K; b++) trans_t[b * K + a] = trans[a * K + b];
    int64_t total_loss = 0;
    for (int64_t i = 0; i < n_sent; i++) {
        int64_t t0 = sent_ptr[i], T = sent_ptr[i + 1] - t0;
        for (int64_t t = 0; t < T; t++) {
            double *u = unary + t * K;
            for (int64_t k = 0; k < K; k++) u[k] = 0.0;
            for (int64_t p = indptr[t0 + t]; p < indptr[t0 + t + 1]; p++) {
                const double *row = W + (int64_t)indices[p] * K;
                for (int64_t k = 0; k < K; k++) u[k] += row[k];
            }
        }
        viterbi_sentence(unary, T, K, trans_t, y + t0, 1, score, back, yhat + t0);
        for (int64_t t = 0; t < T; t++) {
            int32_t a = yhat[t0 + t], b = y[t0 + t];
            if (a != b) {
                total_loss++;
                for (int64_t p = indptr[t0 + t]; p < indptr[t0 + t + 1]; p++) {
                    int32_t *row = acc + (int64_t)indices[p] * K;
                    row[a] += 1;
                    row[b] -= 1;
                }
            }
            if (t > 0) {
                int32_t pa = yhat[t0 + t - 1], pb = y[t0 + t - 1];
                if (pa != pb || a != b) {
                    acc[(n_features + pa) * K + a] += 1;
                    acc[(n_features + pb) * K + b] -= 1;
                }
            }
        }
    }
    int64_t q = 0, n_all = (n_features + K) * K;
    for (int64_t j = 0; j < n_all && q < nnz_cap; j++)
        if (acc[j] != 0) { idx[q] = j; val[q] = (double)acc[j]; q++; }
    *loss = (double)total_loss;
    free(unary); free(score); free(back); free(trans_t); free(acc);
    return q;
}
