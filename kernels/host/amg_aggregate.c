/* Host twins of the AMG aggregation kernels (kernels/amg.h): the distance-2 maximal independent
 * set by hashed Luby rounds and the aggregates grown from it. Every sweep visits the rows in
 * order, but row i reads only what earlier sweeps wrote (or, in place, its own entry), so any
 * order of the rows (a GPU thread per row) gives the same result. */
#include "../amg.h"

static inline uint64_t priority(int32_t v, int round) {
  const uint32_t h = coal_amg_hash((uint32_t)v + 0x9E3779B9U * (uint32_t)(round + 1));
  return (((uint64_t)h << 32) | (uint32_t)v) + 1; /* in [1, 2^64 - 2]: between IN and OUT */
}

coal_status coal_amg_mis2_host(coal_ctx ctx, int32_t n, const int32_t *srowptr,
                               const int32_t *scolind, uint64_t *state, uint64_t *low,
                               int *rounds) {
  (void)ctx;
  for (int32_t v = 0; v < n; v++) state[v] = COAL_AMG_OUT - 1; /* undecided */
  int64_t undecided = n;
  int r = 0;
  for (; undecided > 0; r++) {
    for (int32_t v = 0; v < n; v++) /* sweep 1: fresh priorities */
      if (state[v] != COAL_AMG_IN && state[v] != COAL_AMG_OUT) state[v] = priority(v, r);
    for (int32_t v = 0; v < n; v++) { /* sweep 2: minimum over the closed neighbourhood */
      uint64_t m = state[v];
      for (int32_t p = srowptr[v]; p < srowptr[v + 1]; p++) {
        const uint64_t s = state[scolind[p]];
        m = s < m ? s : m;
      }
      low[v] = m;
    }
    undecided = 0;
    for (int32_t v = 0; v < n; v++) { /* sweep 3: minimum over distance 2, decide */
      const uint64_t sv = state[v];
      if (sv == COAL_AMG_IN || sv == COAL_AMG_OUT) continue;
      uint64_t m = low[v];
      for (int32_t p = srowptr[v]; p < srowptr[v + 1]; p++) {
        const uint64_t s = low[scolind[p]];
        m = s < m ? s : m;
      }
      if (m == COAL_AMG_IN)
        state[v] = COAL_AMG_OUT;
      else if (m == sv)
        state[v] = COAL_AMG_IN;
      else
        undecided++;
    }
  }
  *rounds = r;
  return COAL_SUCCESS;
}

coal_status coal_amg_aggregate_host(coal_ctx ctx, int32_t n, const int32_t *srowptr,
                                    const int32_t *scolind, const double *sval,
                                    const uint64_t *state, int32_t *agg, int32_t *nagg) {
  int32_t roots = 0;
  for (int32_t v = 0; v < n; v++) /* roots numbered in order (an exclusive scan) */
    agg[v] = state[v] == COAL_AMG_IN ? roots++ : -1;
  for (int32_t v = 0; v < n; v++) { /* pass 1: the neighbours of a root */
    if (state[v] == COAL_AMG_IN) continue;
    for (int32_t p = srowptr[v]; p < srowptr[v + 1]; p++) {
      const int32_t w = scolind[p];
      if (state[w] == COAL_AMG_IN) {
        agg[v] = agg[w];
        break;
      }
    }
  }
  int64_t orphans = 0;
  for (int32_t v = 0; v < n; v++) { /* pass 2: the strongest neighbour from pass 1 */
    if (agg[v] != -1) continue;
    int32_t best = -1;
    double bs = 0.0;
    for (int32_t p = srowptr[v]; p < srowptr[v + 1]; p++) {
      const int32_t a = agg[scolind[p]];
      if (a < 0) continue; /* unassigned, or assigned in this pass */
      const double s = sval ? sval[p] : 0.0;
      if (best < 0 || s > bs || (s == bs && a < best)) best = a, bs = s;
    }
    /* best >= 0 by maximality (v is 2 from a root, the vertex between is from pass 1) when the
     * graph is symmetric and state its distance-2 MIS */
    orphans += best < 0;
    agg[v] = -2 - best;
  }
  COAL_CHECK(ctx, orphans == 0, COAL_ERR_ARG,
             "aggregation: %lld vertices have no aggregate next to them (the strength graph is "
             "not symmetric, or the set is not its distance-2 MIS)",
             (long long)orphans);
  for (int32_t v = 0; v < n; v++)
    if (agg[v] < -1) agg[v] = -2 - agg[v];
  *nagg = roots;
  return COAL_SUCCESS;
}
