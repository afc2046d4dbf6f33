/* Smoothed-aggregation AMG (suite host): the setup kernels against plain reference loops, the
 * hierarchy against dense products, the cycle's algebra, and AMG inside CG, Block-CG and LOBPCG.
 *   - strength, MIS-2 and aggregates on small and awkward graphs (empty rows, one node, a
 *     disconnected graph, a dense row, the identity, 1 x 1, random SPD, Laplacians): the strong
 *     graph equals a dense reference loop; the set is distance-2 independent and maximal; every
 *     node is aggregated, each aggregate has one root, pass 1 and pass 2 follow their rules, the
 *     MIS equals a reference that takes each round's minimum over explicit distance-2
 *     neighbourhoods; two runs give the same bits;
 *   - T has one entry a row, orthonormal columns and T (sqrt|a|) = 1; the filtered matrix and
 *     the smoothed P against dense formulas; A_c against a dense P^T A P in long double; two
 *     setups give identical hierarchies;
 *   - the cycle is symmetric (u^T B v = v^T B u to rounding) and positive, a contraction in the
 *     A-norm on Laplacians (V and W, Chebyshev and l1-Jacobi); a block of k columns equals k
 *     single columns (k = 9, and k = 64, 65 to rounding); other layouts give the same result;
 *   - PCG + AMG on 2-D and 3-D Laplacians of several sizes: iteration counts bounded, nearly
 *     independent of the size, and below Jacobi's; Block-CG + AMG with 8 columns and LOBPCG +
 *     AMG converge (true residuals recomputed here); a pure Neumann problem (singular coarse
 *     matrix, pivoted factor) converges on a consistent right-hand side; a stalled coarsening
 *     too large for the dense factor still converges;
 *   - the hierarchy is kept across solves and rebuilt after new values;
 *   - an fp32 matrix gets an fp64 hierarchy from its copy, and a positive cycle;
 *   - bad input: not square, not symmetric, non-positive diagonal, bad options, apply
 *     before setup or after new values, overlapping or mismatched blocks. */
#include "amg_impl.h"
#include "check.h"
#include "solver_impl.h"
#ifdef TEST_CUDA
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#include <cuda_runtime.h>
#pragma GCC diagnostic pop
#include <stdlib.h>
#endif

#include <stdint.h>

static coal_ctx ctx;

/* ---- host CSR helpers ---------------------------------------------------------------------- */
typedef struct {
  int32_t n, *rp, *ci;
  double *v;
} csr;

static csr csr_of(coal_mat A) {
  csr c;
  int64_t n, nnz;
  coal_mat_size(A, &n, NULL, &nnz);
  int64_t *rp = malloc(sizeof(int64_t) * (size_t)(n + 1));
  c.n = (int32_t)n;
  c.rp = malloc(sizeof(int32_t) * (size_t)(n + 1));
  c.ci = malloc(sizeof(int32_t) * (size_t)(nnz + 1));
  c.v = malloc(sizeof(double) * (size_t)(nnz + 1));
  coal_mat_get_csr(A, rp, c.ci, c.v);
  for (int64_t i = 0; i <= n; i++) c.rp[i] = (int32_t)rp[i];
  free(rp);
  return c;
}
static void csr_free(csr *c) { free(c->rp), free(c->ci), free(c->v); }

/* Dense m x ncols copy (row-major) of a matrix. */
static long double *dense_of(coal_mat A, int64_t *nr, int64_t *nc) {
  int64_t n, m, nnz;
  coal_mat_size(A, &n, &m, &nnz);
  csr c = csr_of(A);
  long double *D = calloc((size_t)(n * m + 1), sizeof(long double));
  for (int32_t i = 0; i < n; i++)
    for (int32_t p = c.rp[i]; p < c.rp[i + 1]; p++) D[i * m + c.ci[p]] += c.v[p];
  csr_free(&c);
  *nr = n, *nc = m;
  return D;
}

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 11;
}
static double urand(uint64_t *s) { return (double)lcg(s) / 9007199254740992.0 * 2.0 - 1.0; }

/* Symmetric matrix from a dense n x n array (entries != 0 or marked in keep are stored). */
static coal_mat from_dense(const double *D, const unsigned char *keep, int n) {
  int64_t nnz = 0;
  for (int i = 0; i < n * n; i++) nnz += D[i] != 0.0 || (keep && keep[i]);
  int32_t *ri = malloc(sizeof(int32_t) * (size_t)(nnz + 1)),
          *ci = malloc(sizeof(int32_t) * (size_t)(nnz + 1));
  double *v = malloc(sizeof(double) * (size_t)(nnz + 1));
  int64_t q = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      if (D[i * n + j] != 0.0 || (keep && keep[i * n + j]))
        ri[q] = i, ci[q] = j, v[q++] = D[i * n + j];
  coal_mat A = NULL;
  CHECK_OK(ctx, coal_mat_create_coo(ctx, n, n, nnz, ri, ci, v, COAL_F64, &A));
  free(ri), free(ci), free(v);
  return A;
}

/* ---- the setup kernels against reference loops ---------------------------------------------- */
typedef struct {
  int32_t n, m, *rp, *ci;
  double *sv;
} graph;

static graph strength_of(const csr *a, double theta) {
  graph g;
  double *diag = malloc(sizeof(double) * (size_t)(a->n + 1));
  g.n = a->n;
  g.rp = malloc(sizeof(int32_t) * (size_t)(a->n + 1));
  CHECK_OK(ctx, coal_amg_diagonal_host(ctx, a->n, a->rp, a->ci, a->v, diag));
  CHECK_OK(ctx, coal_amg_strength_count_host(ctx, a->n, a->rp, a->ci, a->v, diag, theta, g.rp));
  g.m = g.rp[a->n];
  g.ci = malloc(sizeof(int32_t) * (size_t)(g.m + 1));
  g.sv = malloc(sizeof(double) * (size_t)(g.m + 1));
  CHECK_OK(ctx, coal_amg_strength_fill_host(ctx, a->n, a->rp, a->ci, a->v, diag, theta, g.rp, g.ci,
                                            g.sv));
  free(diag);
  return g;
}
static void graph_free(graph *g) { free(g->rp), free(g->ci), free(g->sv); }

/* The strong graph against a dense reference: |a_ij| >= theta sqrt(|a_ii a_jj|) in long double
 * (the test matrices keep away from ties), a_ij != 0, i != j. */
static void check_strength(const char *name, coal_mat A, double theta) {
  int64_t n, m;
  long double *D = dense_of(A, &n, &m);
  csr a = csr_of(A);
  graph g = strength_of(&a, theta);
  int bad = g.rp[0] != 0;
  int64_t q = 0;
  for (int64_t i = 0; i < n && !bad; i++) {
    for (int64_t j = 0; j < n; j++) {
      long double x = D[i * n + j], di = D[i * n + i], dj = D[j * n + j];
      int strong = i != j && x != 0 && fabsl(x) >= theta * sqrtl(fabsl(di * dj));
      if (!strong) continue;
      if (q >= g.rp[i + 1] || g.ci[q] != j) {
        bad = 1;
        break;
      }
      long double s = fabsl(x) / sqrtl(fabsl(di * dj));
      if (fabsl(s - g.sv[q]) > 1e-15L * s) bad = 1;
      q++;
    }
    if (q != g.rp[i + 1]) bad = 1;
  }
  CHECK(!bad, "%s theta %g: strong graph differs from the reference", name, theta);
  graph_free(&g);
  csr_free(&a);
  free(D);
}

/* dist[v] <= 2 neighbourhood of v in g (v included), as a list; returns its length. */
static int hood2(const graph *g, int32_t v, int32_t *out, unsigned char *mark) {
  int c = 0;
  out[c++] = v, mark[v] = 1;
  for (int32_t p = g->rp[v]; p < g->rp[v + 1]; p++) {
    int32_t w = g->ci[p];
    if (!mark[w]) out[c++] = w, mark[w] = 1;
    for (int32_t q = g->rp[w]; q < g->rp[w + 1]; q++) {
      int32_t u = g->ci[q];
      if (!mark[u]) out[c++] = u, mark[u] = 1;
    }
  }
  for (int i = 0; i < c; i++) mark[out[i]] = 0;
  return c;
}

/* The documented rounds, written with explicit distance-2 neighbourhoods. */
static int mis_reference(const graph *g, uint64_t *st) {
  int32_t n = g->n, *h = malloc(sizeof(int32_t) * (size_t)(n + 1));
  unsigned char *mark = calloc((size_t)n + 1, 1);
  uint64_t *nx = malloc(sizeof(uint64_t) * (size_t)(n + 1));
  for (int32_t v = 0; v < n; v++) st[v] = 1;
  int r = 0, und = n;
  for (; und > 0; r++) {
    for (int32_t v = 0; v < n; v++)
      if (st[v] != COAL_AMG_IN && st[v] != COAL_AMG_OUT) {
        uint32_t hv = coal_amg_hash((uint32_t)v + 0x9E3779B9U * (uint32_t)(r + 1));
        st[v] = (((uint64_t)hv << 32) | (uint32_t)v) + 1;
      }
    und = 0;
    for (int32_t v = 0; v < n; v++) {
      nx[v] = st[v];
      if (st[v] == COAL_AMG_IN || st[v] == COAL_AMG_OUT) continue;
      int c = hood2(g, v, h, mark);
      uint64_t mn = st[v];
      for (int i = 0; i < c; i++) mn = st[h[i]] < mn ? st[h[i]] : mn;
      if (mn == COAL_AMG_IN)
        nx[v] = COAL_AMG_OUT;
      else if (mn == st[v])
        nx[v] = COAL_AMG_IN;
      else
        und++;
    }
    memcpy(st, nx, sizeof(uint64_t) * (size_t)n);
  }
  free(h), free(mark), free(nx);
  return r;
}

/* MIS-2 and aggregates of g: the properties, the reference rounds, determinism. */
static void check_aggregates(const char *name, const graph *g) {
  int32_t n = g->n, nagg = -1, nagg2 = -1;
  uint64_t *st = malloc(sizeof(uint64_t) * (size_t)(n + 1)),
           *low = malloc(sizeof(uint64_t) * (size_t)(n + 1));
  uint64_t *ref = malloc(sizeof(uint64_t) * (size_t)(n + 1));
  int32_t *agg = malloc(sizeof(int32_t) * (size_t)(n + 1)),
          *agg2 = malloc(sizeof(int32_t) * (size_t)(n + 1));
  int32_t *h = malloc(sizeof(int32_t) * (size_t)(n + 1));
  unsigned char *mark = calloc((size_t)n + 1, 1);
  int rounds = -1, rounds2 = -1;
  CHECK_OK(ctx, coal_amg_mis2_host(ctx, n, g->rp, g->ci, st, low, &rounds));
  int rr = mis_reference(g, ref);
  CHECK(rr == rounds && !memcmp(ref, st, sizeof(uint64_t) * (size_t)n),
        "%s: MIS differs from the reference rounds (%d against %d rounds)", name, rounds, rr);
  int indep = 1, maximal = 1;
  for (int32_t v = 0; v < n; v++) {
    CHECK(st[v] == COAL_AMG_IN || st[v] == COAL_AMG_OUT, "%s: node %d undecided", name, v);
    int c = hood2(g, v, h, mark), near = 0;
    for (int i = 0; i < c; i++) near |= h[i] != v && st[h[i]] == COAL_AMG_IN;
    if (st[v] == COAL_AMG_IN && near) indep = 0;
    if (st[v] != COAL_AMG_IN && !near) maximal = 0;
  }
  CHECK(indep, "%s: two roots within distance 2", name);
  CHECK(maximal, "%s: a node farther than 2 from every root", name);
  CHECK_OK(ctx, coal_amg_aggregate_host(ctx, n, g->rp, g->ci, g->sv, st, agg, &nagg));
  /* reference: roots in order; next to a root: its aggregate; else the strongest neighbour
   * next to a root, ties to the lowest aggregate */
  int32_t roots = 0, *rootof = malloc(sizeof(int32_t) * (size_t)(n + 1));
  for (int32_t v = 0; v < n; v++) rootof[v] = st[v] == COAL_AMG_IN ? roots++ : -1;
  int ok = nagg == roots;
  for (int32_t v = 0; v < n && ok; v++) {
    int32_t want = rootof[v];
    if (want < 0)
      for (int32_t p = g->rp[v]; p < g->rp[v + 1]; p++)
        if (rootof[g->ci[p]] >= 0) want = rootof[g->ci[p]];
    if (want < 0) {
      double bs = -1;
      for (int32_t p = g->rp[v]; p < g->rp[v + 1]; p++) {
        int32_t w = g->ci[p], aw = -1;
        for (int32_t q = g->rp[w]; q < g->rp[w + 1]; q++)
          if (rootof[g->ci[q]] >= 0) aw = rootof[g->ci[q]];
        if (st[w] == COAL_AMG_IN) aw = rootof[w];
        if (aw < 0) continue;
        if (g->sv[p] > bs || (g->sv[p] == bs && aw < want)) want = aw, bs = g->sv[p];
      }
    }
    if (agg[v] != want || agg[v] < 0 || agg[v] >= nagg) ok = 0;
  }
  CHECK(ok, "%s: aggregates differ from the reference rules (%d aggregates, %d roots)", name, nagg,
        roots);
  for (int32_t v = 0; v < n; v++) /* a node without neighbours is alone */
    if (g->rp[v + 1] == g->rp[v]) {
      int alone = st[v] == COAL_AMG_IN;
      for (int32_t u = 0; u < n; u++) alone &= u == v || agg[u] != agg[v];
      CHECK(alone, "%s: isolated node %d is not an aggregate of its own", name, v);
    }
  CHECK_OK(ctx, coal_amg_mis2_host(ctx, n, g->rp, g->ci, low, ref, &rounds2));
  CHECK_OK(ctx, coal_amg_aggregate_host(ctx, n, g->rp, g->ci, g->sv, low, agg2, &nagg2));
  CHECK(rounds2 == rounds && nagg2 == nagg && !memcmp(agg, agg2, sizeof(int32_t) * (size_t)n),
        "%s: a second run gives other aggregates", name);
  /* T: one entry a row, columns orthonormal, T bc = b, bc the aggregates' norms of b; with b = 1
   * (bc = sqrt|a|) exactly, and for a positive b that varies */
  for (int kind = 0; kind < 2 && nagg > 0; kind++) {
    uint64_t seed = 5;
    double *b = malloc(sizeof(double) * (size_t)(n + 1)),
           *bc = malloc(sizeof(double) * (size_t)nagg);
    for (int32_t i = 0; i < n; i++) b[i] = kind ? 1.5 + urand(&seed) : 1.0;
    int32_t *aptr = malloc(sizeof(int32_t) * (size_t)(nagg + 1)),
            *mem = malloc(sizeof(int32_t) * (size_t)(n + 1));
    int32_t *trp = malloc(sizeof(int32_t) * (size_t)(n + 1)),
            *tci = malloc(sizeof(int32_t) * (size_t)(n + 1));
    double *tv = malloc(sizeof(double) * (size_t)(n + 1));
    long double *col = calloc((size_t)nagg, sizeof(long double)),
                *nb = calloc((size_t)nagg, sizeof(long double));
    CHECK_OK(ctx, coal_amg_tentative_host(ctx, n, nagg, agg, b, aptr, mem, trp, tci, tv, bc));
    int tok = aptr[0] == 0 && aptr[nagg] == n;
    for (int32_t a1 = 0; a1 < nagg; a1++)
      for (int32_t q = aptr[a1]; q < aptr[a1 + 1]; q++)
        tok &= agg[mem[q]] == a1 && (q == aptr[a1] || mem[q] > mem[q - 1]);
    for (int32_t i = 0; i < n; i++) {
      tok &= trp[i] == i && tci[i] == agg[i];
      col[agg[i]] += (long double)tv[i] * tv[i];
      nb[agg[i]] += (long double)b[i] * b[i];
      tok &= fabs(tv[i] * bc[agg[i]] - b[i]) <= 4.5e-16 * b[i]; /* two roundings */
    }
    tok &= trp[n] == n;
    for (int32_t a1 = 0; a1 < nagg; a1++)
      tok &= fabsl(col[a1] - 1) <= 4.5e-16L * (aptr[a1 + 1] - aptr[a1] + 1) &&
             fabsl(bc[a1] - sqrtl(nb[a1])) <= 2.3e-16L * (aptr[a1 + 1] - aptr[a1] + 1) * bc[a1];
    CHECK(tok, "%s: T is not b normalised per aggregate (b %s)", name, kind ? "random" : "ones");
    free(b), free(bc), free(aptr), free(mem), free(trp), free(tci), free(tv), free(col), free(nb);
  }
  free(st), free(low), free(ref), free(agg), free(agg2), free(h), free(mark), free(rootof);
}

/* The filtered matrix against its definition. */
static void check_filter(const char *name, coal_mat A, double theta) {
  csr a = csr_of(A);
  graph g = strength_of(&a, theta);
  int32_t n = a.n, *frp = malloc(sizeof(int32_t) * (size_t)(n + 1));
  int32_t *fci = malloc(sizeof(int32_t) * (size_t)(g.m + n + 1));
  double *fv = malloc(sizeof(double) * (size_t)(g.m + n + 1));
  double *b = malloc(sizeof(double) * (size_t)(n + 1));
  uint64_t seed = 8;
  for (int32_t i = 0; i < n; i++) b[i] = theta > 0.1 ? 1.2 + urand(&seed) : 1.0;
  CHECK_OK(ctx, coal_amg_filter_host(ctx, n, a.rp, a.ci, a.v, b, g.rp, g.ci, frp, fci, fv));
  int ok = frp[n] == g.m + n;
  for (int32_t i = 0; i < n && ok; i++) {
    long double lump = 0, ab = 0, afb = 0, sc = 0;
    int32_t f = frp[i], q = g.rp[i];
    for (int32_t p = a.rp[i]; p < a.rp[i + 1]; p++) {
      int32_t j = a.ci[p];
      int strong = q < g.rp[i + 1] && g.ci[q] == j;
      if (j == i)
        lump += a.v[p];
      else if (!strong)
        lump += (long double)a.v[p] * b[j] / b[i];
      if (strong) q++;
      ab += (long double)a.v[p] * b[j];
      sc += fabsl((long double)a.v[p] * b[j]);
    }
    for (int32_t e = frp[i]; e < frp[i + 1]; e++) afb += (long double)fv[e] * b[fci[e]];
    ok &= fabsl(afb - ab) <= 1e-14L * sc; /* A_F b = A b */
    for (; f < frp[i + 1]; f++) {
      if (f > frp[i] && fci[f] <= fci[f - 1]) ok = 0;
      if (fci[f] == i)
        ok &= fabsl(fv[f] - lump) <= 1e-14L * (fabsl(lump) + 1);
      else {
        int found = 0;
        for (int32_t p = a.rp[i]; p < a.rp[i + 1]; p++)
          if (a.ci[p] == fci[f]) found = fv[f] == a.v[p];
        ok &= found;
      }
    }
  }
  CHECK(ok, "%s theta %g: filtered matrix differs from its definition", name, theta);
  if (theta == 0.0) { /* no weak entries: A_F = A where A has no explicit zero and a diagonal */
    int same = 1, zeros = 0;
    for (int64_t p = 0; p < a.rp[n]; p++) zeros |= a.v[p] == 0.0;
    for (int32_t i = 0; i < n; i++) {
      int hasd = 0;
      for (int32_t p = a.rp[i]; p < a.rp[i + 1]; p++) hasd |= a.ci[p] == i;
      zeros |= !hasd;
    }
    if (!zeros) {
      same = frp[n] == a.rp[n] && !memcmp(fci, a.ci, sizeof(int32_t) * (size_t)a.rp[n]) &&
             !memcmp(fv, a.v, sizeof(double) * (size_t)a.rp[n]);
      CHECK(same, "%s: A_F differs from A at theta 0", name);
    }
  }
  free(frp), free(fci), free(fv), free(b);
  graph_free(&g);
  csr_free(&a);
}

#ifdef TEST_CUDA
/* ---- the CUDA twins against the host twins, bit for bit ------------------------------------ */
/* Backend (device) copies of host arrays, poisoned outputs, and the comparison. */
static void *dev_copy(const void *h, size_t bytes) {
  void *d = NULL;
  CHECK_OK(ctx, coal_backend(ctx)->mem.alloc(ctx, bytes ? bytes : 1, &d));
  if (bytes) CHECK_OK(ctx, coal_backend(ctx)->mem.upload(ctx, d, h, bytes));
  return d;
}
static void *dev_poisoned(size_t bytes) { /* all bits set: NaN doubles, -1 integers */
  unsigned char *h = malloc(bytes + 1);
  memset(h, 0xff, bytes + 1);
  void *d = dev_copy(h, bytes);
  free(h);
  return d;
}
static int dev_same(const void *d, const void *h, size_t bytes) {
  if (!bytes) return 1;
  unsigned char *x = malloc(bytes);
  CHECK_OK(ctx, coal_backend(ctx)->mem.download(ctx, x, d, bytes));
  int same = !memcmp(x, h, bytes);
  free(x);
  return same;
}
static void dev_free(void *d) { coal_backend(ctx)->mem.release(ctx, d); }

/* Every setup kernel of the context's backend (the GPU) against coal_amg_X_host on A's CSR at
 * strength threshold theta: diagonal, both inverse diagonals, strength count and fill, filter,
 * MIS-2 (state and rounds), aggregates, T and the lists, smoothing. */
static void twin_case(const char *name, const csr *a, double theta) {
  const coal_amg_ops *ops = &coal_backend(ctx)->amg;
  const int32_t n = a->n, nnz = a->rp[n];
  const size_t dn = sizeof(double) * (size_t)n, in1 = sizeof(int32_t) * ((size_t)n + 1);
  int32_t *rp = dev_copy(a->rp, in1), *ci = dev_copy(a->ci, sizeof(int32_t) * (size_t)nnz);
  double *v = dev_copy(a->v, sizeof(double) * (size_t)nnz);
  double *diag = malloc(dn + 8), *dinv = malloc(dn + 8), *b = malloc(dn + 8);
  uint64_t seed = 77 + (uint64_t)n;
  for (int32_t i = 0; i < n; i++) b[i] = 0.5 + 0.5 * (urand(&seed) + 1.0); /* in [0.5, 1.5] */
  CHECK_OK(ctx, coal_amg_diagonal_host(ctx, n, a->rp, a->ci, a->v, diag));
  double *d_diag = dev_poisoned(dn);
  CHECK_OK(ctx, ops->diagonal(ctx, n, rp, ci, v, d_diag));
  CHECK(dev_same(d_diag, diag, dn), "%s: diagonal twins differ", name);
  for (int l1 = 0; l1 < 2; l1++) {
    int64_t bad = -7, dbad = -7;
    CHECK_OK(ctx, coal_amg_dinv_host(ctx, n, a->rp, a->ci, a->v, l1, dinv, &bad));
    double *d_dinv = dev_poisoned(dn);
    CHECK_OK(ctx, ops->dinv(ctx, n, rp, ci, v, l1, d_dinv, &dbad));
    CHECK(dbad == bad && dev_same(d_dinv, dinv, dn), "%s: dinv (l1 %d) twins differ", name, l1);
    dev_free(d_dinv);
  }
  /* strength */
  int32_t *srp = malloc(in1);
  CHECK_OK(ctx, coal_amg_strength_count_host(ctx, n, a->rp, a->ci, a->v, diag, theta, srp));
  const int32_t m = srp[n];
  int32_t *d_srp = dev_poisoned(in1);
  CHECK_OK(ctx, ops->strength_count(ctx, n, rp, ci, v, d_diag, theta, d_srp));
  CHECK(dev_same(d_srp, srp, in1), "%s theta %g: strength counts differ", name, theta);
  int32_t *sci = malloc(sizeof(int32_t) * ((size_t)m + 1));
  double *sval = malloc(sizeof(double) * ((size_t)m + 1));
  CHECK_OK(ctx,
           coal_amg_strength_fill_host(ctx, n, a->rp, a->ci, a->v, diag, theta, srp, sci, sval));
  int32_t *d_sci = dev_poisoned(sizeof(int32_t) * (size_t)m);
  double *d_sval = dev_poisoned(sizeof(double) * (size_t)m);
  CHECK_OK(ctx, ops->strength_fill(ctx, n, rp, ci, v, d_diag, theta, d_srp, d_sci, d_sval));
  CHECK(dev_same(d_sci, sci, sizeof(int32_t) * (size_t)m) &&
            dev_same(d_sval, sval, sizeof(double) * (size_t)m),
        "%s theta %g: strength graphs differ", name, theta);
  /* filter */
  {
    const size_t fm = (size_t)m + (size_t)n;
    int32_t *frp = malloc(in1), *fci = malloc(sizeof(int32_t) * (fm + 1));
    double *fv = malloc(sizeof(double) * (fm + 1));
    CHECK_OK(ctx, coal_amg_filter_host(ctx, n, a->rp, a->ci, a->v, b, srp, sci, frp, fci, fv));
    double *d_b = dev_copy(b, dn);
    int32_t *d_frp = dev_poisoned(in1), *d_fci = dev_poisoned(sizeof(int32_t) * fm);
    double *d_fv = dev_poisoned(sizeof(double) * fm);
    CHECK_OK(ctx, ops->filter(ctx, n, rp, ci, v, d_b, d_srp, d_sci, d_frp, d_fci, d_fv));
    CHECK(dev_same(d_frp, frp, in1) && dev_same(d_fci, fci, sizeof(int32_t) * fm) &&
              dev_same(d_fv, fv, sizeof(double) * fm),
          "%s theta %g: filtered matrices differ", name, theta);
    dev_free(d_b), dev_free(d_frp), dev_free(d_fci), dev_free(d_fv);
    free(frp), free(fci), free(fv);
  }
  /* MIS-2 and aggregates */
  const size_t un = sizeof(uint64_t) * (size_t)n, an = sizeof(int32_t) * (size_t)n;
  uint64_t *state = malloc(un + 8), *low = malloc(un + 8);
  int rounds = -1, drounds = -2;
  CHECK_OK(ctx, coal_amg_mis2_host(ctx, n, srp, sci, state, low, &rounds));
  uint64_t *d_state = dev_poisoned(un), *d_low = dev_poisoned(un);
  CHECK_OK(ctx, ops->mis2(ctx, n, d_srp, d_sci, d_state, d_low, &drounds));
  CHECK(drounds == rounds && dev_same(d_state, state, un), "%s theta %g: MIS-2 differs (%d/%d)",
        name, theta, drounds, rounds);
  int32_t *agg = malloc(an + 4), nagg = -1, dnagg = -2;
  CHECK_OK(ctx, coal_amg_aggregate_host(ctx, n, srp, sci, sval, state, agg, &nagg));
  int32_t *d_agg = dev_poisoned(an);
  CHECK_OK(ctx, ops->aggregate(ctx, n, d_srp, d_sci, d_sval, d_state, d_agg, &dnagg));
  CHECK(dnagg == nagg && dev_same(d_agg, agg, an), "%s theta %g: aggregates differ", name, theta);
  /* T, the lists, bc; then the smoothing over A's pattern (as if it were A_F T) */
  if (nagg > 0) {
    const size_t gn = sizeof(int32_t) * ((size_t)nagg + 1), bn = sizeof(double) * (size_t)nagg;
    int32_t *aptr = malloc(gn), *mem = malloc(an + 4), *trp = malloc(in1), *tci = malloc(an + 4);
    double *tv = malloc(dn + 8), *bc = malloc(bn + 8);
    CHECK_OK(ctx, coal_amg_tentative_host(ctx, n, nagg, agg, b, aptr, mem, trp, tci, tv, bc));
    double *d_b = dev_copy(b, dn), *d_tv = dev_poisoned(dn), *d_bc = dev_poisoned(bn);
    int32_t *d_aptr = dev_poisoned(gn), *d_mem = dev_poisoned(an), *d_trp = dev_poisoned(in1),
            *d_tci = dev_poisoned(an);
    CHECK_OK(ctx,
             ops->tentative(ctx, n, nagg, d_agg, d_b, d_aptr, d_mem, d_trp, d_tci, d_tv, d_bc));
    CHECK(dev_same(d_aptr, aptr, gn) && dev_same(d_mem, mem, an) && dev_same(d_trp, trp, in1) &&
              dev_same(d_tci, tci, an) && dev_same(d_tv, tv, dn) && dev_same(d_bc, bc, bn),
          "%s theta %g: tentative prolongators differ", name, theta);
    double *sv = malloc(sizeof(double) * ((size_t)nnz + 1));
    memcpy(sv, a->v, sizeof(double) * (size_t)nnz);
    CHECK_OK(ctx, coal_amg_dinv_host(ctx, n, a->rp, a->ci, a->v, 0, dinv, &(int64_t){0}));
    double *d_dinv = dev_copy(dinv, dn), *d_sv = dev_copy(sv, sizeof(double) * (size_t)nnz);
    CHECK_OK(ctx, coal_amg_smooth_host(ctx, n, a->rp, a->ci, sv, dinv, agg, tv, 0.61));
    CHECK_OK(ctx, ops->smooth(ctx, n, rp, ci, d_sv, d_dinv, d_agg, d_tv, 0.61));
    CHECK(dev_same(d_sv, sv, sizeof(double) * (size_t)nnz), "%s theta %g: smoothing differs", name,
          theta);
    dev_free(d_b), dev_free(d_tv), dev_free(d_bc), dev_free(d_aptr), dev_free(d_mem);
    dev_free(d_trp), dev_free(d_tci), dev_free(d_dinv), dev_free(d_sv);
    free(aptr), free(mem), free(trp), free(tci), free(tv), free(bc), free(sv);
  }
  dev_free(rp), dev_free(ci), dev_free(v), dev_free(d_diag), dev_free(d_srp), dev_free(d_sci);
  dev_free(d_sval), dev_free(d_state), dev_free(d_low), dev_free(d_agg);
  free(diag), free(dinv), free(b), free(srp), free(sci), free(sval), free(state), free(low);
  free(agg);
}

/* The fused Chebyshev step of the GPU against the host twin on A, k columns, every variant the
 * cycle uses (no dprev, rout and dnew dropped, in place), outputs poisoned. */
static void twin_cheb(const char *name, coal_mat A, int64_t k) {
  const coal_amg_ops *ops = &coal_backend(ctx)->amg;
  CHECK_OK(ctx, coal_mat_host(A));
  const int64_t n = A->nrows, len = n * k;
  const size_t bytes = sizeof(double) * (size_t)(len > 0 ? len : 1);
  double *h[6], *dinv = malloc(sizeof(double) * (size_t)(n + 1));
  uint64_t seed = 91 + (uint64_t)k;
  for (int a = 0; a < 6; a++) {
    h[a] = malloc(bytes);
    for (int64_t e = 0; e < len; e++) h[a][e] = urand(&seed);
  }
  for (int64_t i = 0; i < n; i++) dinv[i] = 0.5 + 0.25 * (urand(&seed) + 1.0);
  double *d_dinv = dev_copy(dinv, sizeof(double) * (size_t)n);
  for (int variant = 0; variant < 3; variant++) {
    /* 0: all terms, separate outputs; 1: no dprev, x from zero; 2: rin = rout, xin = xout */
    double *rin = h[0], *dprev = variant == 1 ? NULL : h[1], *xin = variant == 1 ? NULL : h[2];
    double *rout = malloc(bytes), *dnew = malloc(bytes), *xout = malloc(bytes);
    double *g_rin = dev_copy(rin, bytes), *g_dprev = dprev ? dev_copy(dprev, bytes) : NULL;
    double *g_xin = xin ? dev_copy(xin, bytes) : NULL;
    double *g_rout = variant == 2 ? g_rin : dev_poisoned(bytes), *g_dnew = dev_poisoned(bytes);
    double *g_xout = variant == 2 ? g_xin : dev_poisoned(bytes);
    CHECK_OK(ctx,
             coal_amg_cheb_step_host(A, k, 0.37, 1.21, dinv, rin, rout, dprev, dnew, xin, xout));
    CHECK_OK(ctx, ops->cheb_step(A, k, 0.37, 1.21, d_dinv, g_rin, g_rout, g_dprev, g_dnew, g_xin,
                                 g_xout));
    double *got[3] = {malloc(bytes), malloc(bytes), malloc(bytes)}, err = 0, mx = 0;
    CHECK_OK(ctx, coal_backend(ctx)->mem.download(ctx, got[0], g_rout, bytes));
    CHECK_OK(ctx, coal_backend(ctx)->mem.download(ctx, got[1], g_dnew, bytes));
    CHECK_OK(ctx, coal_backend(ctx)->mem.download(ctx, got[2], g_xout, bytes));
    const double *want[3] = {rout, dnew, xout};
    for (int o = 0; o < 3; o++)
      for (int64_t e = 0; e < len; e++) {
        err = fmax(err, fabs(got[o][e] - want[o][e]));
        mx = fmax(mx, fabs(want[o][e]));
        if (got[o][e] != got[o][e]) err = INFINITY; /* NaN: an entry left unwritten */
      }
    CHECK(err <= 1e-13 * (mx + 1.0), "%s k %lld variant %d: Chebyshev steps differ by %g", name,
          (long long)k, variant, err);
    if (variant != 2) dev_free(g_rout), dev_free(g_xout);
    dev_free(g_rin), dev_free(g_dnew);
    if (g_dprev) dev_free(g_dprev);
    if (g_xin) dev_free(g_xin);
    free(rout), free(dnew), free(xout), free(got[0]), free(got[1]), free(got[2]);
  }
  dev_free(d_dinv);
  for (int a = 0; a < 6; a++) free(h[a]);
  free(dinv);
}

/* The coarse solve of the GPU against the host twin: a random lower factor with a positive
 * diagonal, a permutation, full rank and rank < nc, k = 1, 5, 32; outputs poisoned. */
static void twin_coarse(void) {
  const coal_amg_ops *ops = &coal_backend(ctx)->amg;
  const int32_t nc = 37;
  uint64_t seed = 4242;
  double *fac = malloc(sizeof(double) * nc * nc);
  int32_t *perm = malloc(sizeof(int32_t) * nc);
  for (int32_t c = 0; c < nc; c++)
    for (int32_t r = 0; r < nc; r++)
      fac[c * nc + r] = r == c ? 2.0 + urand(&seed) : r > c ? 0.3 * urand(&seed) : 99.0;
  for (int32_t i = 0; i < nc; i++) perm[i] = (i * 11 + 5) % nc; /* 11 and 37 coprime */
  double *d_fac = dev_copy(fac, sizeof(double) * nc * nc);
  int32_t *d_perm = dev_copy(perm, sizeof(int32_t) * nc);
  const int64_t ks[] = {1, 5, 32};
  for (int c = 0; c < 3; c++)
    for (int32_t rank = nc; rank >= nc - 3; rank -= 3) {
      const int64_t k = ks[c];
      const size_t bytes = sizeof(double) * (size_t)(nc * k);
      double *B = malloc(bytes), *X = malloc(bytes), *W = malloc(bytes), *got = malloc(bytes);
      for (int64_t e = 0; e < nc * k; e++) B[e] = urand(&seed);
      CHECK_OK(ctx, coal_amg_coarse_solve_host(ctx, nc, rank, fac, perm, k, B, X, W));
      double *d_B = dev_copy(B, bytes), *d_X = dev_poisoned(bytes), *d_W = dev_poisoned(bytes);
      CHECK_OK(ctx, ops->coarse_solve(ctx, nc, rank, d_fac, d_perm, k, d_B, d_X, d_W));
      CHECK_OK(ctx, coal_backend(ctx)->mem.download(ctx, got, d_X, bytes));
      double err = 0, mx = 0;
      for (int64_t e = 0; e < nc * k; e++) {
        err = fmax(err, fabs(got[e] - X[e]));
        mx = fmax(mx, fabs(X[e]));
        if (got[e] != got[e]) err = INFINITY;
      }
      CHECK(err <= 1e-12 * (mx + 1.0), "coarse solve k %lld rank %d: twins differ by %g",
            (long long)k, rank, err);
      dev_free(d_B), dev_free(d_X), dev_free(d_W);
      free(B), free(X), free(W), free(got);
    }
  dev_free(d_fac), dev_free(d_perm);
  free(fac), free(perm);
}
#endif

static void kernels_case(const char *name, coal_mat A, const double *thetas, int nth) {
  csr a = csr_of(A);
  for (int t = 0; t < nth; t++) {
    check_strength(name, A, thetas[t]);
    check_filter(name, A, thetas[t]);
    graph g = strength_of(&a, thetas[t]);
    check_aggregates(name, &g);
    graph_free(&g);
#ifdef TEST_CUDA
    twin_case(name, &a, thetas[t]);
#endif
  }
#ifdef TEST_CUDA
  const int64_t ks[] = {1, 3, 32, 64};
  for (int c = 0; c < 4; c++) twin_cheb(name, A, ks[c]);
#endif
  csr_free(&a);
}

static void test_kernels(void) {
  const double th[] = {0.0, 0.02, 0.3};
#ifdef TEST_CUDA
  twin_coarse();
#endif
  coal_mat A = NULL;
  { /* 1 x 1 */
    double d = 2.0;
    A = from_dense(&d, NULL, 1);
    kernels_case("1x1", A, th, 3);
    coal_mat_destroy(&A);
  }
  { /* identity: every node alone */
    double I[36] = {0};
    for (int i = 0; i < 6; i++) I[i * 7] = 1.0;
    A = from_dense(I, NULL, 6);
    kernels_case("identity", A, th, 3);
    coal_mat_destroy(&A);
  }
  { /* empty rows (no entry at all) among a path, and an explicit zero */
    double D[64] = {0};
    unsigned char keep[64] = {0};
    int path[] = {0, 2, 3, 5, 6};
    for (int a = 0; a < 5; a++) D[path[a] * 9] = 2.5;
    for (int a = 0; a + 1 < 5; a++) {
      D[path[a] * 8 + path[a + 1]] = D[path[a + 1] * 8 + path[a]] = -1.0;
    }
    keep[0 * 8 + 7] = keep[7 * 8 + 0] = 1; /* explicit zero to the empty row 7's column */
    A = from_dense(D, keep, 8);
    kernels_case("empty rows", A, th, 2);
    coal_mat_destroy(&A);
  }
  { /* disconnected: two paths and an isolated node; a dense row (star) */
    int n = 40;
    double *D = calloc((size_t)(n * n), sizeof(double));
    for (int i = 0; i < n; i++) D[i * n + i] = 4.0;
    for (int i = 0; i + 1 < 19; i++) D[i * n + i + 1] = D[(i + 1) * n + i] = -1.0 - 0.01 * i;
    for (int i = 20; i + 1 < 39; i++) D[i * n + i + 1] = D[(i + 1) * n + i] = -0.5 - 0.0217 * i;
    A = from_dense(D, NULL, n);
    kernels_case("disconnected", A, th, 3);
    coal_mat_destroy(&A);
    for (int i = 1; i < n; i++) D[i] = D[i * n] = -0.05 * (1 + i % 7);
    D[0] = 50.0;
    A = from_dense(D, NULL, n);
    kernels_case("dense row", A, th, 3);
    coal_mat_destroy(&A);
    free(D);
  }
  { /* random SPD with values of all sizes; Laplacians */
    CHECK_OK(ctx, coal_gen_random_spd(ctx, 300, 6.0, 11, COAL_F64, &A));
    kernels_case("random spd", A, th, 3);
    coal_mat_destroy(&A);
    CHECK_OK(ctx, coal_gen_laplace2d(ctx, 23, 17, COAL_F64, &A));
    kernels_case("lap2d 23x17", A, th, 2);
    coal_mat_destroy(&A);
    CHECK_OK(ctx, coal_gen_laplace3d(ctx, 9, 8, 7, 27, COAL_F64, &A));
    kernels_case("lap3d27 9x8x7", A, th, 2);
    coal_mat_destroy(&A);
  }
}

/* ---- the hierarchy ------------------------------------------------------------------------- */
static coal_amg amg_for(coal_mat A, double theta, int64_t coarse, coal_amg_smoother sm,
                        coal_amg_cycle cyc) {
  coal_amg amg = NULL;
  CHECK_OK(ctx, coal_amg_create(A, &amg));
  CHECK_OK(ctx, coal_amg_set_theta(amg, theta));
  CHECK_OK(ctx, coal_amg_set_coarse_size(amg, coarse));
  CHECK_OK(ctx, coal_amg_set_smoother(amg, sm, sm == COAL_AMG_CHEBYSHEV ? 2 : 1));
  CHECK_OK(ctx, coal_amg_set_cycle(amg, cyc));
  CHECK_OK(ctx, coal_amg_setup(amg));
  return amg;
}

/* A_c = P^T A P and P = (I - omega D^-1 A_F) T against dense long-double products (theta 0: A_F
 * = A for these matrices), and two setups bit for bit. */
static void check_hierarchy(const char *name, coal_mat A0, double theta) {
  coal_amg amg = amg_for(A0, theta, 20, COAL_AMG_CHEBYSHEV, COAL_AMG_V_CYCLE);
  int64_t n0;
  coal_mat_size(A0, &n0, NULL, NULL);
  long double *bl = malloc(sizeof(long double) * (size_t)n0); /* level l's near-nullspace */
  for (int64_t i = 0; i < n0; i++) bl[i] = 1;
  coal_amg amg2 = amg_for(A0, theta, 20, COAL_AMG_CHEBYSHEV, COAL_AMG_V_CYCLE);
  coal_amg_info in;
  CHECK_OK(ctx, coal_amg_get_info(amg, &in));
  CHECK(in.levels >= 3, "%s: only %d levels", name, in.levels);
  for (int l = 0; l + 1 < in.levels; l++) {
    coal_amg_level *L = &amg->lev[l];
    int64_t n, m, nc, mc, pn, pm, rn, rm;
    long double *A = dense_of(L->A, &n, &m), *P = dense_of(L->P, &pn, &pm);
    long double *R = dense_of(L->R, &rn, &rm), *C = dense_of(amg->lev[l + 1].A, &nc, &mc);
    CHECK(pn == n && pm == nc && nc == mc && rn == pm && rm == pn, "%s level %d: shapes", name, l);
    long double *AP = calloc((size_t)(n * pm), sizeof(long double)), cmax = 0, err = 0, rerr = 0;
    for (int64_t i = 0; i < n; i++)
      for (int64_t k = 0; k < n; k++)
        if (A[i * n + k] != 0)
          for (int64_t j = 0; j < pm; j++) AP[i * pm + j] += A[i * n + k] * P[k * pm + j];
    for (int64_t a = 0; a < pm; a++)
      for (int64_t b = 0; b < pm; b++) {
        long double s = 0;
        for (int64_t i = 0; i < n; i++) s += P[i * pm + a] * AP[i * pm + b];
        cmax = fmaxl(cmax, fabsl(s));
        err = fmaxl(err, fabsl(s - C[a * pm + b]));
      }
    for (int64_t i = 0; i < n; i++)
      for (int64_t a = 0; a < pm; a++) rerr = fmaxl(rerr, fabsl(R[a * n + i] - P[i * pm + a]));
    CHECK(err <= 1e-13L * cmax, "%s level %d: A_c differs from P^T A P by %Lg (max %Lg)", name, l,
          err, cmax);
    CHECK(rerr == 0, "%s level %d: R is not P^T", name, l);
    if (theta == 0.0) { /* P = T - omega D^-1 A T, T from a fresh aggregation and b_l */
      csr a = csr_of(L->A);
      graph g = strength_of(&a, 0.0);
      int32_t nagg = 0, *agg = malloc(sizeof(int32_t) * (size_t)(n + 1));
      uint64_t *st = malloc(sizeof(uint64_t) * (size_t)(n + 1)),
               *low = malloc(sizeof(uint64_t) * (size_t)(n + 1));
      int rounds;
      coal_amg_mis2_host(ctx, (int32_t)n, g.rp, g.ci, st, low, &rounds);
      coal_amg_aggregate_host(ctx, (int32_t)n, g.rp, g.ci, g.sv, st, agg, &nagg);
      CHECK(nagg == pm, "%s level %d: %d aggregates, P has %lld columns", name, l, nagg,
            (long long)pm);
      long double *T = calloc((size_t)(n * pm + 1), sizeof(long double)), perr = 0, pmax = 0;
      long double *bc = calloc((size_t)pm + 1, sizeof(long double));
      for (int64_t i = 0; i < n; i++) bc[agg[i]] += bl[i] * bl[i];
      for (int64_t j = 0; j < pm; j++) bc[j] = sqrtl(bc[j]);
      for (int64_t i = 0; i < n; i++) T[i * pm + agg[i]] = bl[i] / bc[agg[i]];
      const long double omega = 4.0L / (3.0L * (long double)L->rho);
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < pm; j++) {
          long double at = 0;
          for (int64_t k = 0; k < n; k++) at += A[i * n + k] * T[k * pm + j];
          long double p = T[i * pm + j] - omega / A[i * n + i] * at;
          pmax = fmaxl(pmax, fabsl(p));
          perr = fmaxl(perr, fabsl(p - P[i * pm + j]));
        }
      CHECK(perr <= 1e-13L * pmax, "%s level %d: P differs from (I - omega D^-1 A) T by %Lg", name,
            l, perr / pmax);
      free(bl);
      bl = bc; /* the next level's near-nullspace */
      free(T), free(agg), free(st), free(low);
      graph_free(&g);
      csr_free(&a);
    }
    /* the second setup: the same bits */
    coal_amg_level *L2 = &amg2->lev[l];
    csr p1 = csr_of(L->P), p2 = csr_of(L2->P), c1 = csr_of(amg->lev[l + 1].A),
        c2 = csr_of(amg2->lev[l + 1].A);
    int same = p1.n == p2.n && p1.rp[p1.n] == p2.rp[p2.n] && c1.rp[c1.n] == c2.rp[c2.n] &&
               !memcmp(p1.ci, p2.ci, sizeof(int32_t) * (size_t)p1.rp[p1.n]) &&
               !memcmp(c1.ci, c2.ci, sizeof(int32_t) * (size_t)c1.rp[c1.n]);
#ifdef TEST_CUDA
    /* the GPU's products and Lanczos dots sum in an order that may change between runs: the
     * same structure, the values to rounding */
    same = same && fabs(L->rho - L2->rho) <= 1e-12 * L->rho;
    double pm1 = 0, cm1 = 0, pd = 0, cd = 0;
    for (int32_t q = 0; same && q < p1.rp[p1.n]; q++)
      pm1 = fmax(pm1, fabs(p1.v[q])), pd = fmax(pd, fabs(p1.v[q] - p2.v[q]));
    for (int32_t q = 0; same && q < c1.rp[c1.n]; q++)
      cm1 = fmax(cm1, fabs(c1.v[q])), cd = fmax(cd, fabs(c1.v[q] - c2.v[q]));
    same = same && pd <= 1e-13 * pm1 && cd <= 1e-13 * cm1;
#else
    same = same && !memcmp(p1.v, p2.v, sizeof(double) * (size_t)p1.rp[p1.n]) &&
           !memcmp(c1.v, c2.v, sizeof(double) * (size_t)c1.rp[c1.n]) && L->rho == L2->rho;
#endif
    CHECK(same, "%s level %d: two setups differ", name, l);
    csr_free(&p1), csr_free(&p2), csr_free(&c1), csr_free(&c2);
    free(A), free(P), free(R), free(C), free(AP);
  }
  /* info: complexities from the level sizes */
  double rows = 0, nnz = 0;
  for (int l = 0; l < in.levels; l++) rows += (double)in.rows[l], nnz += (double)in.nnz[l];
  CHECK(fabs(in.grid_complexity - rows / (double)in.rows[0]) < 1e-12 &&
            fabs(in.operator_complexity - nnz / (double)in.nnz[0]) < 1e-12,
        "%s: complexities", name);
  CHECK(in.coarse_direct && in.coarse_rank == in.rows[in.levels - 1], "%s: coarse solve", name);
  free(bl);
  coal_amg_destroy(&amg);
  coal_amg_destroy(&amg2);
}

static void test_hierarchy(void) {
  coal_mat A = NULL;
  CHECK_OK(ctx, coal_gen_laplace2d(ctx, 24, 20, COAL_F64, &A));
  check_hierarchy("lap2d 24x20", A, 0.0);
  check_hierarchy("lap2d 24x20 theta", A, 0.02);
  coal_mat_destroy(&A);
  CHECK_OK(ctx, coal_gen_aniso3d(ctx, 9, 9, 9, 1.0, 1.0, 1e-3, COAL_F64, &A));
  check_hierarchy("aniso 9^3", A, 0.02);
  coal_mat_destroy(&A);
  CHECK_OK(ctx, coal_gen_random_spd(ctx, 500, 8.0, 3, COAL_F64, &A));
  check_hierarchy("random spd", A, 0.0);
  coal_mat_destroy(&A);
}

/* ---- the cycle ------------------------------------------------------------------------------ */
static void apply_host(coal_amg amg, int64_t n, int64_t k, const double *r, double *z,
                       coal_layout lay) {
  coal_bvec R = NULL, Z = NULL;
  CHECK_OK(ctx, coal_bvec_create(ctx, n, k, COAL_F64, lay, 0, &R));
  CHECK_OK(ctx, coal_bvec_create(ctx, n, k, COAL_F64, lay, 0, &Z));
  CHECK_OK(ctx, coal_bvec_set_host(R, r, COAL_ROW_MAJOR, k));
  CHECK_OK(ctx, coal_amg_apply(amg, R, Z));
  CHECK_OK(ctx, coal_bvec_get_host(Z, z, COAL_ROW_MAJOR, k));
  coal_bvec_destroy(&R);
  coal_bvec_destroy(&Z);
}

static long double dotl(const double *x, const double *y, int64_t n, int64_t sx, int64_t sy) {
  long double s = 0;
  for (int64_t i = 0; i < n; i++) s += (long double)x[i * sx] * y[i * sy];
  return s;
}

static void spmv_host(const csr *a, const double *x, double *y) {
  for (int32_t i = 0; i < a->n; i++) {
    long double s = 0;
    for (int32_t p = a->rp[i]; p < a->rp[i + 1]; p++) s += (long double)a->v[p] * x[a->ci[p]];
    y[i] = (double)s;
  }
}

/* Symmetry, positivity, A-norm contraction, blocks against columns, layouts. */
static void check_cycle(const char *name, coal_mat A, double theta, coal_amg_smoother sm,
                        coal_amg_cycle cyc, double max_factor) {
  coal_amg amg = amg_for(A, theta, 30, sm, cyc);
  csr a = csr_of(A);
  const int64_t n = a.n, k = 9;
  uint64_t s = 99;
  double *U = malloc(sizeof(double) * (size_t)(n * k)),
         *BU = malloc(sizeof(double) * (size_t)(n * k));
  double *Z1 = malloc(sizeof(double) * (size_t)n), *Bc = malloc(sizeof(double) * (size_t)(n * k));
  for (int64_t i = 0; i < n * k; i++) U[i] = urand(&s);
  apply_host(amg, n, k, U, BU, COAL_ROW_MAJOR);
  long double asym = 0, scale = 0;
  int pos = 1;
  for (int64_t a1 = 0; a1 < k; a1++) {
    long double uBu = dotl(U + a1, BU + a1, n, k, k);
    pos &= uBu > 0;
    for (int64_t b1 = a1 + 1; b1 < k; b1++) {
      long double x = dotl(U + a1, BU + b1, n, k, k), y = dotl(U + b1, BU + a1, n, k, k);
      asym = fmaxl(asym, fabsl(x - y));
      scale = fmaxl(scale, sqrtl(dotl(U + a1, U + a1, n, k, k) * dotl(BU + b1, BU + b1, n, k, k)));
    }
  }
  CHECK(asym <= 1e-13L * scale, "%s: u^T B v - v^T B u = %Lg (scale %Lg)", name, asym, scale);
  CHECK(pos, "%s: u^T B u <= 0", name);
  /* a block of k columns = k single columns (the host SpMV and SpMM sum rows in one order) */
  double diff = 0, mx = 0;
  for (int64_t j = 0; j < k; j++) {
    double *u = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) u[i] = U[i * k + j];
    apply_host(amg, n, 1, u, Z1, COAL_ROW_MAJOR);
    for (int64_t i = 0; i < n; i++) {
      diff = fmax(diff, fabs(Z1[i] - BU[i * k + j]));
      mx = fmax(mx, fabs(BU[i * k + j]));
    }
    free(u);
  }
  CHECK(diff <= 1e-14 * mx, "%s: block and single columns differ by %g (max %g)", name, diff, mx);
  apply_host(amg, n, k, U, Bc, COAL_COL_MAJOR); /* copied through the level-0 blocks */
  CHECK(check_rel_diff(Bc, BU, (size_t)(n * k)) <= 1e-15, "%s: column-major differs", name);
  { /* one column, row-major with a leading dimension of 3: not contiguous, copied */
    coal_bvec R = NULL, Z = NULL;
    CHECK_OK(ctx, coal_bvec_create(ctx, n, 1, COAL_F64, COAL_ROW_MAJOR, 3, &R));
    CHECK_OK(ctx, coal_bvec_create(ctx, n, 1, COAL_F64, COAL_ROW_MAJOR, 3, &Z));
    CHECK_OK(ctx, coal_bvec_set_host(R, U, COAL_ROW_MAJOR, k)); /* column 0 of U */
    CHECK_OK(ctx, coal_amg_apply(amg, R, Z));
    CHECK_OK(ctx, coal_bvec_get_host(Z, Z1, COAL_ROW_MAJOR, 1));
    double d1 = 0;
    for (int64_t i = 0; i < n; i++) d1 = fmax(d1, fabs(Z1[i] - BU[i * k]));
    CHECK(d1 <= 1e-14 * mx, "%s: a strided column differs by %g", name, d1);
    coal_bvec_destroy(&R);
    coal_bvec_destroy(&Z);
  }
  /* contraction: e <- e - B A e, ratio of A-norms after a few steps */
  double *e = malloc(sizeof(double) * (size_t)n), *r = malloc(sizeof(double) * (size_t)n);
  for (int64_t i = 0; i < n; i++) e[i] = urand(&s);
  double ratio = 0;
  for (int it = 0; it < 8; it++) {
    spmv_host(&a, e, r);
    long double before = dotl(e, r, n, 1, 1);
    apply_host(amg, n, 1, r, Z1, COAL_ROW_MAJOR);
    for (int64_t i = 0; i < n; i++) e[i] -= Z1[i];
    spmv_host(&a, e, r);
    long double after = dotl(e, r, n, 1, 1);
    ratio = (double)sqrtl(after / before);
    for (int64_t i = 0; i < n; i++) e[i] /= (double)sqrtl(after); /* keep it O(1) */
  }
  CHECK(ratio < max_factor, "%s: A-norm reduction per cycle %.3f, expected below %.2f", name, ratio,
        max_factor);
  if (getenv("COALESCE_TEST_VERBOSE")) printf("%s: A-norm reduction per cycle %.3f\n", name, ratio);
  free(U), free(BU), free(Z1), free(Bc), free(e), free(r);
  csr_free(&a);
  coal_amg_destroy(&amg);
}

/* Wide blocks: k = 64 and 65 columns in one apply equal single-column applies (the GPU reaches
 * them through other kernels than k = 1: to rounding). */
static void check_wide(const char *name, coal_mat A) {
  coal_amg amg = amg_for(A, 0.0, 30, COAL_AMG_CHEBYSHEV, COAL_AMG_V_CYCLE);
  int64_t n;
  coal_mat_size(A, &n, NULL, NULL);
  const int64_t ks[] = {64, 65};
  uint64_t s = 7;
  for (int c = 0; c < 2; c++) {
    const int64_t k = ks[c];
    double *U = malloc(sizeof(double) * (size_t)(n * k)),
           *BU = malloc(sizeof(double) * (size_t)(n * k));
    double *u = malloc(sizeof(double) * (size_t)n), *z = malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n * k; i++) U[i] = urand(&s);
    apply_host(amg, n, k, U, BU, COAL_ROW_MAJOR);
    double diff = 0, mx = 0;
    const int64_t cols[] = {0, 31, k - 1};
    for (int q = 0; q < 3; q++) {
      for (int64_t i = 0; i < n; i++) u[i] = U[i * k + cols[q]];
      apply_host(amg, n, 1, u, z, COAL_ROW_MAJOR);
      for (int64_t i = 0; i < n; i++) {
        diff = fmax(diff, fabs(z[i] - BU[i * k + cols[q]]));
        mx = fmax(mx, fabs(z[i]));
      }
    }
    CHECK(diff <= 1e-12 * mx, "%s k %lld: the block and single columns differ by %g (max %g)", name,
          (long long)k, diff, mx);
    free(U), free(BU), free(u), free(z);
  }
  coal_amg_destroy(&amg);
}

static void test_cycle(void) {
  coal_mat A = NULL;
  CHECK_OK(ctx, coal_gen_laplace2d(ctx, 40, 40, COAL_F64, &A));
  check_cycle("lap2d cheb V", A, 0.0, COAL_AMG_CHEBYSHEV, COAL_AMG_V_CYCLE, 0.4);
  check_cycle("lap2d cheb W", A, 0.0, COAL_AMG_CHEBYSHEV, COAL_AMG_W_CYCLE, 0.35);
  check_cycle("lap2d l1 V", A, 0.0, COAL_AMG_L1_JACOBI, COAL_AMG_V_CYCLE, 0.8);
  check_wide("lap2d", A);
  coal_mat_destroy(&A);
  CHECK_OK(ctx, coal_gen_laplace3d(ctx, 14, 14, 14, 7, COAL_F64, &A));
  check_cycle("lap3d cheb V", A, 0.0, COAL_AMG_CHEBYSHEV, COAL_AMG_V_CYCLE, 0.33);
  check_cycle("lap3d l1 W", A, 0.0, COAL_AMG_L1_JACOBI, COAL_AMG_W_CYCLE, 0.75);
  coal_mat_destroy(&A);
  CHECK_OK(ctx, coal_gen_laplace3d(ctx, 12, 12, 12, 27, COAL_F64, &A));
  check_cycle("lap3d27 cheb V", A, 0.02, COAL_AMG_CHEBYSHEV, COAL_AMG_V_CYCLE, 0.33);
  coal_mat_destroy(&A);
}

/* ---- AMG in the solvers --------------------------------------------------------------------- */
/* ||b - A x|| / ||b|| per column in long double, the worst of k (row-major blocks). */
static double worst_residual(const csr *a, const double *B, const double *X, int64_t k) {
  double worst = 0;
  for (int64_t j = 0; j < k; j++) {
    long double rr = 0, bb = 0;
    for (int32_t i = 0; i < a->n; i++) {
      long double s = B[i * k + j];
      for (int32_t p = a->rp[i]; p < a->rp[i + 1]; p++)
        s -= (long double)a->v[p] * X[a->ci[p] * k + j];
      rr += s * s, bb += (long double)B[i * k + j] * B[i * k + j];
    }
    worst = fmax(worst, (double)sqrtl(rr / bb));
  }
  return worst;
}

/* Solves with pc; returns the iterations (Block-CG: block iterations; CG: per column) or -1. */
static int solve_with(coal_mat A, coal_method m, coal_pc_type pc, int64_t k, double rtol,
                      const double *Bh, double *worst, coal_solver *keep) {
  int64_t n;
  coal_mat_size(A, &n, NULL, NULL);
  coal_solver S = keep && *keep ? *keep : NULL;
  if (!S) {
    CHECK_OK(ctx, coal_solver_create(A, &S));
    CHECK_OK(ctx, coal_solver_set_method(S, m));
    CHECK_OK(ctx, coal_solver_set_pc(S, pc));
    CHECK_OK(ctx, coal_solver_set_tolerances(S, rtol, 0.0, 5000));
    CHECK_OK(ctx, coal_solver_set_check_every(S, 1));
  }
  coal_bvec B = NULL, X = NULL;
  CHECK_OK(ctx, coal_bvec_create(ctx, n, k, COAL_F64, COAL_ROW_MAJOR, 0, &B));
  CHECK_OK(ctx, coal_bvec_create(ctx, n, k, COAL_F64, COAL_ROW_MAJOR, 0, &X));
  CHECK_OK(ctx, coal_bvec_set_host(B, Bh, COAL_ROW_MAJOR, k));
  CHECK_OK(ctx, coal_bvec_set_value(X, 0.0));
  coal_status st = coal_solver_solve(S, B, X);
  CHECK(st == COAL_SUCCESS, "solve: %s: %s", coal_status_string(st), coal_ctx_last_error(ctx));
  double *Xh = malloc(sizeof(double) * (size_t)(n * k));
  coal_bvec_get_host(X, Xh, COAL_ROW_MAJOR, k);
  csr a = csr_of(A);
  *worst = worst_residual(&a, Bh, Xh, k);
  int conv = 1;
  for (int64_t j = 0; j < k; j++) {
    coal_solve_info in;
    coal_solver_get_info(S, j, &in);
    conv &= in.reason == COAL_SOLVE_CONVERGED;
  }
  int its = conv && st == COAL_SUCCESS ? coal_solver_iterations(S) : -1;
  csr_free(&a);
  free(Xh);
  coal_bvec_destroy(&B);
  coal_bvec_destroy(&X);
  if (keep)
    *keep = S;
  else
    coal_solver_destroy(&S);
  return its;
}

static double *rhs(int64_t n, int64_t k, uint64_t seed) {
  double *B = malloc(sizeof(double) * (size_t)(n * k));
  for (int64_t i = 0; i < n * k; i++) B[i] = urand(&seed);
  return B;
}

/* PCG + AMG: bounded iterations over sizes (the host counts measured, 9 to 11, plus 3), at most
 * 3 more on the largest grid than on the smallest, fewer than Jacobi's (48 to 386). */
static void test_pcg(void) {
  struct {
    int dim, n, bound;
  } cases[] = {{2, 32, 12}, {2, 64, 12}, {2, 128, 14}, {3, 12, 12}, {3, 20, 12}, {3, 28, 12}};
  int first[2] = {0, 0}; /* the smallest size's count, per dimension */
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    coal_mat A = NULL;
    int n = cases[c].n;
    if (cases[c].dim == 2)
      CHECK_OK(ctx, coal_gen_laplace2d(ctx, n, n, COAL_F64, &A));
    else
      CHECK_OK(ctx, coal_gen_laplace3d(ctx, n, n, n, 7, COAL_F64, &A));
    int64_t rows;
    coal_mat_size(A, &rows, NULL, NULL);
    double *B = rhs(rows, 1, 5 + c), wa = 1, wj = 1;
    int ia = solve_with(A, COAL_METHOD_CG, COAL_PC_AMG, 1, 1e-8, B, &wa, NULL);
    int ij = solve_with(A, COAL_METHOD_CG, COAL_PC_JACOBI, 1, 1e-8, B, &wj, NULL);
    if (getenv("COALESCE_TEST_VERBOSE"))
      printf("lap%dd:%d: PCG + AMG %d iterations, Jacobi %d\n", cases[c].dim, n, ia, ij);
    CHECK(ia > 0 && wa <= 1e-8, "lap%dd:%d: PCG + AMG did not converge (%d its, residual %g)",
          cases[c].dim, n, ia, wa);
    CHECK(ia <= cases[c].bound, "lap%dd:%d: PCG + AMG took %d iterations, bound %d", cases[c].dim,
          n, ia, cases[c].bound);
    CHECK(ij > 0 && ia < ij, "lap%dd:%d: AMG %d iterations, Jacobi %d", cases[c].dim, n, ia, ij);
    int *f = &first[cases[c].dim - 2];
    if (!*f) *f = ia;
    CHECK(ia <= *f + 3, "lap%dd:%d: %d iterations, %d on the smallest grid", cases[c].dim, n, ia,
          *f);
    free(B);
    coal_mat_destroy(&A);
  }
}

/* Block-CG + AMG with 8 columns; LOBPCG + AMG; the hierarchy kept and rebuilt. */
static void test_block_and_eigs(void) {
  coal_mat A = NULL;
  CHECK_OK(ctx, coal_gen_laplace3d(ctx, 16, 16, 16, 7, COAL_F64, &A));
  int64_t n;
  coal_mat_size(A, &n, NULL, NULL);
  double *B = rhs(n, 8, 17), w = 1, w2 = 1;
  coal_solver S = NULL;
  int its = solve_with(A, COAL_METHOD_BLOCKCG, COAL_PC_AMG, 8, 1e-8, B, &w, &S);
  CHECK(its > 0 && its <= 12 && w <= 1e-8, "Block-CG + AMG, 8 columns: %d its, residual %g", its,
        w);
  int jts = solve_with(A, COAL_METHOD_BLOCKCG, COAL_PC_JACOBI, 8, 1e-8, B, &w2, NULL);
  CHECK(jts > its, "Block-CG: AMG %d iterations, Jacobi %d", its, jts);
  /* a second solve keeps the hierarchy; new values rebuild it */
  coal_amg first = S->amg;
  coal_amg_info i1, i2;
  CHECK_OK(ctx, coal_amg_get_info(first, &i1));
  its = solve_with(A, COAL_METHOD_BLOCKCG, COAL_PC_AMG, 8, 1e-8, B, &w, &S);
  CHECK_OK(ctx, coal_amg_get_info(S->amg, &i2));
  CHECK(S->amg == first && i1.setup_seconds == i2.setup_seconds && its > 0,
        "the hierarchy was not kept across solves");
  csr a = csr_of(A);
  for (int64_t p = 0; p < a.rp[a.n]; p++) a.v[p] *= 3.0;
  CHECK_OK(ctx, coal_mat_set_values(A, a.v));
  uint64_t state = S->amg_state;
  its = solve_with(A, COAL_METHOD_BLOCKCG, COAL_PC_AMG, 8, 1e-8, B, &w, &S);
  CHECK(S->amg_state != state && its > 0 && w <= 1e-8, "new values: hierarchy not rebuilt (%d, %g)",
        its, w);
  coal_solver_destroy(&S);
  csr_free(&a);
  free(B);
  coal_mat_destroy(&A);

  /* LOBPCG: the 6 smallest eigenpairs of lap3d 12^3, true residuals recomputed here */
  CHECK_OK(ctx, coal_gen_laplace3d(ctx, 12, 12, 12, 7, COAL_F64, &A));
  coal_mat_size(A, &n, NULL, NULL);
  a = csr_of(A);
  int itn[2] = {0, 0};
  for (int pcs = 0; pcs < 2; pcs++) {
    coal_eigen E = NULL;
    CHECK_OK(ctx, coal_eigen_create(A, NULL, &E));
    CHECK_OK(ctx, coal_eigen_set_nev(E, 6, 0));
    CHECK_OK(ctx, coal_eigen_set_tolerances(E, 1e-8, 2000));
    CHECK_OK(ctx, coal_eigen_set_pc(E, pcs ? COAL_PC_AMG : COAL_PC_JACOBI));
    CHECK_OK(ctx, coal_eigen_solve(E));
    CHECK(coal_eigen_nconverged(E) == 6, "LOBPCG + %s: %d of 6 converged", pcs ? "AMG" : "Jacobi",
          coal_eigen_nconverged(E));
    coal_eigen_stats st;
    coal_eigen_get_stats(E, &st);
    itn[pcs] = st.iterations;
    coal_bvec V = NULL;
    CHECK_OK(ctx, coal_bvec_create(ctx, n, 6, COAL_F64, COAL_ROW_MAJOR, 0, &V));
    CHECK_OK(ctx, coal_eigen_get_vectors(E, V));
    double *Vh = malloc(sizeof(double) * (size_t)(n * 6)), *x = malloc(sizeof(double) * (size_t)n),
           *y = malloc(sizeof(double) * (size_t)n);
    coal_bvec_get_host(V, Vh, COAL_COL_MAJOR, n);
    for (int j = 0; j < 6; j++) {
      coal_eig_info in;
      coal_eigen_get_info(E, j, &in);
      memcpy(x, Vh + (size_t)j * n, sizeof(double) * (size_t)n);
      spmv_host(&a, x, y);
      long double rr = 0, xx = 0;
      for (int64_t i = 0; i < n; i++) {
        long double r = y[i] - (long double)in.value * x[i];
        rr += r * r, xx += (long double)x[i] * x[i];
      }
      double rel = (double)sqrtl(rr / xx) / fabs(in.value);
      CHECK(rel <= 2e-8, "LOBPCG + %s pair %d: true residual %g", pcs ? "AMG" : "Jacobi", j, rel);
    }
    free(Vh), free(x), free(y);
    coal_bvec_destroy(&V);
    coal_eigen_destroy(&E);
  }
  CHECK(itn[1] < itn[0], "LOBPCG: AMG %d iterations, Jacobi %d", itn[1], itn[0]);
  csr_free(&a);
  coal_mat_destroy(&A);
}

/* Pure Neumann 2-D Laplacian (singular: the constants): the coarsest matrix is singular, its
 * factor pivoted with rank nc - 1, and PCG + AMG solves a consistent system. A stalled
 * coarsening too large for the dense factor is smoothed instead and still converges. */
static void test_singular_and_stalled(void) {
  const int m = 40, n = m * m;
  int64_t nnz = 0;
  int32_t *ri = malloc(sizeof(int32_t) * 5 * n), *ci = malloc(sizeof(int32_t) * 5 * n);
  double *v = malloc(sizeof(double) * 5 * n);
  for (int y = 0; y < m; y++)
    for (int x = 0; x < m; x++) {
      int i = y * m + x, deg = 0, nb[4][2] = {{x - 1, y}, {x + 1, y}, {x, y - 1}, {x, y + 1}};
      for (int d = 0; d < 4; d++)
        if (nb[d][0] >= 0 && nb[d][0] < m && nb[d][1] >= 0 && nb[d][1] < m) {
          ri[nnz] = i, ci[nnz] = nb[d][1] * m + nb[d][0], v[nnz++] = -1.0;
          deg++;
        }
      ri[nnz] = i, ci[nnz] = i, v[nnz++] = deg;
    }
  coal_mat A = NULL;
  CHECK_OK(ctx, coal_mat_create_coo(ctx, n, n, nnz, ri, ci, v, COAL_F64, &A));
  coal_amg amg = amg_for(A, 0.0, 50, COAL_AMG_CHEBYSHEV, COAL_AMG_V_CYCLE);
  coal_amg_info in;
  CHECK_OK(ctx, coal_amg_get_info(amg, &in));
  CHECK(in.coarse_direct && in.coarse_rank == in.rows[in.levels - 1] - 1,
        "Neumann: coarse rank %d of %lld", in.coarse_rank, (long long)in.rows[in.levels - 1]);
  coal_amg_destroy(&amg);
  double *B = rhs(n, 1, 3), mean = 0, w = 1;
  for (int i = 0; i < n; i++) mean += B[i] / n;
  for (int i = 0; i < n; i++) B[i] -= mean; /* consistent: orthogonal to the constants */
  int its = solve_with(A, COAL_METHOD_CG, COAL_PC_AMG, 1, 1e-8, B, &w, NULL);
  CHECK(its > 0 && its <= 20 && w <= 1e-8, "Neumann: PCG + AMG %d its, residual %g", its, w);
  free(B), free(ri), free(ci), free(v);
  coal_mat_destroy(&A);

  /* theta above every connection of the 7-point stencil (1/6): all nodes alone, the level
   * stalls at 6859 rows > COAL_AMG_DENSE_MAX: smoothed only */
  CHECK_OK(ctx, coal_gen_laplace3d(ctx, 19, 19, 19, 7, COAL_F64, &A));
  amg = amg_for(A, 0.5, 100, COAL_AMG_CHEBYSHEV, COAL_AMG_V_CYCLE);
  CHECK_OK(ctx, coal_amg_get_info(amg, &in));
  CHECK(in.levels == 1 && !in.coarse_direct, "stalled: %d levels, direct %d", in.levels,
        in.coarse_direct);
  int64_t rows;
  coal_mat_size(A, &rows, NULL, NULL);
  B = rhs(rows, 1, 4);
  coal_solver S = NULL;
  CHECK_OK(ctx, coal_solver_create(A, &S));
  CHECK_OK(ctx, coal_solver_set_method(S, COAL_METHOD_CG));
  CHECK_OK(ctx, coal_solver_set_pc_user(S, coal_amg_pc_apply, amg));
  its = solve_with(A, COAL_METHOD_CG, COAL_PC_USER, 1, 1e-8, B, &w, &S);
  CHECK(its > 0 && w <= 1e-8, "stalled: PCG with the smoothed level %d its, residual %g", its, w);
  coal_solver_destroy(&S);
  coal_amg_destroy(&amg);
  free(B);
  coal_mat_destroy(&A);
}

/* ---- bad input ------------------------------------------------------------------------------ */
static void test_errors(void) {
  coal_mat A = NULL;
  coal_amg amg = NULL;
  /* not square */
  int32_t ri[] = {0, 1, 2, 0}, ci[] = {0, 1, 2, 3};
  double v[] = {1, 1, 1, 0.5};
  CHECK_OK(ctx, coal_mat_create_coo(ctx, 3, 4, 4, ri, ci, v, COAL_F64, &A));
  CHECK_OK(ctx, coal_amg_create(A, &amg));
  CHECK_ERR(ctx, coal_amg_setup(amg), COAL_ERR_ARG);
  coal_amg_destroy(&amg);
  coal_mat_destroy(&A);
  /* not symmetric (beyond 1e-12) */
  double D[9] = {4, -1, 0, -1.001, 4, -1, 0, -1, 4};
  A = from_dense(D, NULL, 3);
  CHECK_OK(ctx, coal_amg_create(A, &amg));
  CHECK_ERR(ctx, coal_amg_setup(amg), COAL_ERR_NOT_SPD);
  CHECK(strstr(coal_ctx_last_error(ctx), "symmetric") != NULL, "message: %s",
        coal_ctx_last_error(ctx));
  CHECK_ERR(ctx, coal_amg_get_info(amg, &(coal_amg_info){0}), COAL_ERR_STATE);
  coal_amg_destroy(&amg);
  coal_mat_destroy(&A);
  /* non-positive diagonal: zero and negative, and through the solver and the eigensolver */
  for (int c = 0; c < 2; c++) {
    double E[9] = {4, -1, 0, -1, c ? -2.0 : 0.0, -1, 0, -1, 4};
    unsigned char keep[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0};
    A = from_dense(E, keep, 3);
    CHECK_OK(ctx, coal_amg_create(A, &amg));
    CHECK_ERR(ctx, coal_amg_setup(amg), COAL_ERR_NOT_SPD);
    CHECK(strstr(coal_ctx_last_error(ctx), "diagonal entry 2") != NULL, "message: %s",
          coal_ctx_last_error(ctx));
    coal_amg_destroy(&amg);
    coal_solver S = NULL;
    CHECK_OK(ctx, coal_solver_create(A, &S));
    CHECK_OK(ctx, coal_solver_set_pc(S, COAL_PC_AMG));
    CHECK_ERR(ctx, coal_solver_setup(S), COAL_ERR_NOT_SPD);
    coal_solver_destroy(&S);
    coal_eigen Eg = NULL;
    CHECK_OK(ctx, coal_eigen_create(A, NULL, &Eg));
    CHECK_OK(ctx, coal_eigen_set_pc(Eg, COAL_PC_AMG));
    CHECK_ERR(ctx, coal_eigen_solve(Eg), COAL_ERR_NOT_SPD);
    coal_eigen_destroy(&Eg);
    coal_mat_destroy(&A);
  }
  /* fp32, options, state, blocks */
  coal_mat A32 = NULL;
  CHECK_OK(ctx, coal_gen_laplace2d(ctx, 40, 40, COAL_F32, &A32));
  CHECK_OK(ctx, coal_amg_create(A32, &amg));
  CHECK_OK(ctx, coal_amg_set_coarse_size(amg, 30));
  CHECK_OK(ctx, coal_amg_setup(amg)); /* an fp64 hierarchy from the fp32 matrix */
  {
    coal_amg_info in32;
    CHECK_OK(ctx, coal_amg_get_info(amg, &in32));
    CHECK(in32.levels >= 2 && in32.rows[0] == 1600, "fp32 A: %d levels", in32.levels);
    coal_bvec R = NULL, Z = NULL;
    CHECK_OK(ctx, coal_bvec_create(ctx, 1600, 2, COAL_F64, COAL_ROW_MAJOR, 0, &R));
    CHECK_OK(ctx, coal_bvec_create(ctx, 1600, 2, COAL_F64, COAL_ROW_MAJOR, 0, &Z));
    CHECK_OK(ctx, coal_bvec_set_random(R, 5));
    CHECK_OK(ctx, coal_amg_apply(amg, R, Z));
    double zr[2] = {0, 0};
    double *zh = malloc(sizeof(double) * 3200), *rh = malloc(sizeof(double) * 3200);
    CHECK_OK(ctx, coal_bvec_get_host(Z, zh, COAL_ROW_MAJOR, 2));
    CHECK_OK(ctx, coal_bvec_get_host(R, rh, COAL_ROW_MAJOR, 2));
    for (int i = 0; i < 3200; i++) zr[i % 2] += zh[i] * rh[i];
    CHECK(zr[0] > 0 && zr[1] > 0, "fp32 A: the cycle is not positive (%g, %g)", zr[0], zr[1]);
    free(zh), free(rh);
    coal_bvec_destroy(&R);
    coal_bvec_destroy(&Z);
  }
  coal_amg_destroy(&amg);
  coal_mat_destroy(&A32);
  CHECK_OK(ctx, coal_gen_laplace2d(ctx, 30, 30, COAL_F64, &A));
  CHECK_OK(ctx, coal_amg_create(A, &amg));
  CHECK_ERR(ctx, coal_amg_set_theta(amg, -0.1), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_amg_set_theta(amg, 1.0), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_amg_set_smoother(amg, COAL_AMG_CHEBYSHEV, 0), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_amg_set_smoother(amg, (coal_amg_smoother)7, 2), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_amg_set_coarse_size(amg, 0), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_amg_set_max_levels(amg, 0), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_amg_set_max_levels(amg, COAL_AMG_MAX_LEVELS + 1), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_amg_set_cycle(amg, (coal_amg_cycle)5), COAL_ERR_ARG);
  coal_bvec R = NULL, Z = NULL, W = NULL;
  CHECK_OK(ctx, coal_bvec_create(ctx, 900, 2, COAL_F64, COAL_ROW_MAJOR, 0, &R));
  CHECK_OK(ctx, coal_bvec_create(ctx, 900, 2, COAL_F64, COAL_ROW_MAJOR, 0, &Z));
  CHECK_OK(ctx, coal_bvec_create(ctx, 900, 3, COAL_F64, COAL_ROW_MAJOR, 0, &W));
  CHECK_OK(ctx, coal_bvec_set_random(R, 1));
  CHECK_ERR(ctx, coal_amg_apply(amg, R, Z), COAL_ERR_STATE);
  CHECK_OK(ctx, coal_amg_setup(amg));
  CHECK_OK(ctx, coal_amg_apply(amg, R, Z));
  CHECK_ERR(ctx, coal_amg_apply(amg, R, R), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_amg_apply(amg, R, W), COAL_ERR_ARG);
  CHECK_ERR(ctx, coal_amg_apply(amg, R, NULL), COAL_ERR_ARG);
  csr a = csr_of(A);
  CHECK_OK(ctx, coal_mat_set_values(A, a.v));
  CHECK_ERR(ctx, coal_amg_apply(amg, R, Z), COAL_ERR_STATE);
  CHECK_OK(ctx, coal_amg_setup(amg));
  CHECK_OK(ctx, coal_amg_apply(amg, R, Z));
  csr_free(&a);
  coal_bvec_destroy(&R), coal_bvec_destroy(&Z), coal_bvec_destroy(&W);
  coal_amg_destroy(&amg);
  coal_mat_destroy(&A);
  /* names */
  coal_pc_type pc;
  CHECK(coal_pc_parse("amg", &pc) == COAL_SUCCESS && pc == COAL_PC_AMG, "parse amg");
  CHECK(coal_pc_parse("user", &pc) == COAL_ERR_ARG, "user must not parse");
  CHECK(!strcmp(coal_pc_name(COAL_PC_AMG), "amg"), "pc name");
  coal_amg_smoother sm;
  CHECK(coal_amg_smoother_parse("l1-jacobi", &sm) == COAL_SUCCESS && sm == COAL_AMG_L1_JACOBI &&
            !strcmp(coal_amg_smoother_name(COAL_AMG_CHEBYSHEV), "chebyshev"),
        "smoother names");
}

#ifdef TEST_CUDA
/* Device out of memory during the setup: most of the free device memory is held outside the
 * library, the setup must answer COAL_ERR_DEVICE_MEMORY and give back what it had made (the free
 * memory afterwards is what it was before; the context's pool caches nothing: KEEP_MB = 0), and
 * once the memory is released the same object sets up and applies. */
static void test_device_oom(void) {
  setenv("COALESCE_POOL_KEEP_MB", "0", 1);
  coal_ctx c = NULL;
  coal_status cs = coal_ctx_create(COAL_BACKEND_CUDA, &c);
  unsetenv("COALESCE_POOL_KEEP_MB");
  CHECK_OK(c, cs);
  if (cs) return;
  coal_mat A = NULL;
  coal_amg amg = NULL;
  CHECK_OK(c, coal_gen_laplace3d(c, 48, 48, 48, 7, COAL_F64, &A));
  CHECK_OK(c, coal_backend(c)->mat.prepare(A)); /* A on the device before the memory runs short */
  CHECK_OK(c, coal_amg_create(A, &amg));
  CHECK_OK(c, coal_ctx_sync(c));
  size_t fr0 = 0, tot = 0, fr1 = 0;
  cudaMemGetInfo(&fr0, &tot);
  const size_t margin = (size_t)12 << 20; /* the hierarchy needs about 25 MB */
  void *hog = NULL;
  if (fr0 <= margin || cudaMalloc(&hog, fr0 - margin) != cudaSuccess) {
    (void)cudaGetLastError();
    printf("device OOM test: could not hold the free memory, skipped\n");
  } else {
    size_t frh = 0;
    cudaMemGetInfo(&frh, &tot);
    const coal_status st = coal_amg_setup(amg);
    CHECK(st == COAL_ERR_DEVICE_MEMORY, "setup short of device memory answered %s (%s)",
          coal_status_string(st), coal_ctx_last_error(c));
    CHECK_OK(c, coal_ctx_sync(c));
    cudaMemGetInfo(&fr1, &tot);
    CHECK(fr1 + ((size_t)2 << 20) >= frh, "the failed setup kept %.1f MB of device memory",
          ((double)frh - (double)fr1) / 1e6);
    cudaFree(hog);
  }
  CHECK_OK(c, coal_amg_setup(amg)); /* the same object, memory back */
  coal_bvec R = NULL, Z = NULL;
  CHECK_OK(c, coal_bvec_create(c, 48 * 48 * 48, 1, COAL_F64, COAL_ROW_MAJOR, 0, &R));
  CHECK_OK(c, coal_bvec_create(c, 48 * 48 * 48, 1, COAL_F64, COAL_ROW_MAJOR, 0, &Z));
  CHECK_OK(c, coal_bvec_set_random(R, 9));
  CHECK_OK(c, coal_amg_apply(amg, R, Z));
  coal_bvec_destroy(&R);
  coal_bvec_destroy(&Z);
  coal_amg_destroy(&amg);
  coal_mat_destroy(&A);
  coal_ctx_destroy(&c);
}
#endif

int main(void) {
  /* the whole suite on a CUDA context under TEST_CUDA; the kernel tests add the twin
   * comparisons */
  const int rc = check_context(&ctx);
  if (rc) return rc;
  test_kernels();
  test_hierarchy();
  test_cycle();
  test_pcg();
  test_block_and_eigs();
  test_singular_and_stalled();
  test_errors();
#ifdef TEST_CUDA
  test_device_oom();
#endif
  coal_ctx_destroy(&ctx);
  return check_finish();
}
