/* seqswift against PETSc's own VECSEQ: every vector operation, on a twin pair holding the same
 * entries, each started while the seqswift's only current copy is the backend one (so an
 * operation that read a stale host array would differ), then the products of seqaijswift on
 * seqswift vectors, and CG + Jacobi through KSP. Backend: COALESCE_BACKEND (host in CI: the
 * backend copy is then a separate host buffer, so the bookkeeping is exercised; cuda on a GPU). */
#include <float.h>
#include <math.h>
#include <petscksp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coalesce_petsc.h"
#include "petsc_check.h"

#define TOL 1e-13

/* max |a - b| / max |b| over the entries; a NaN in one and not the other gives +inf */
static double cmp_arrays(Vec a, Vec b) {
  const PetscScalar *x, *y;
  PetscInt n;
  double d = 0, m = 0;
  PetscCallAbort(PETSC_COMM_SELF, VecGetLocalSize(a, &n));
  PetscCallAbort(PETSC_COMM_SELF, VecGetArrayRead(a, &x));
  PetscCallAbort(PETSC_COMM_SELF, VecGetArrayRead(b, &y));
  for (PetscInt i = 0; i < n; i++) {
    if ((x[i] != x[i]) != (y[i] != y[i])) d = INFINITY;
    if (x[i] != x[i] || y[i] != y[i]) continue;
    double e = fabs(x[i] - y[i]);
    if (e > d) d = e;
    if (fabs(y[i]) > m) m = fabs(y[i]);
  }
  PetscCallAbort(PETSC_COMM_SELF, VecRestoreArrayRead(a, &x));
  PetscCallAbort(PETSC_COMM_SELF, VecRestoreArrayRead(b, &y));
  return d / (m > 0 ? m : 1.0);
}

static double rel(double a, double b) {
  if (a != a || b != b) return (a != a) == (b != b) ? 0.0 : INFINITY;
  if (a == b) return 0.0;
  return fabs(a - b) / (fabs(b) > 0 ? fabs(b) : 1.0);
}

static int is_swift(Vec v) {
  PetscBool t;
  PetscCallAbort(PETSC_COMM_SELF, PetscObjectTypeCompare((PetscObject)v, VECSEQSWIFT, &t));
  return t;
}

/* A twin pair: s (seqswift) and t (VECSEQ) with the same entries. */
typedef struct {
  Vec s, t;
} pair;

static unsigned rng_state = 12345u;
static double urand(void) { /* [-1, 1) */
  rng_state = rng_state * 1664525u + 1013904223u;
  return (double)(rng_state >> 8) / (double)(1u << 24) * 2.0 - 1.0;
}

static PetscErrorCode pair_create(PetscInt n, pair *p) {
  PetscFunctionBeginUser;
  PetscCall(VecCreate(PETSC_COMM_SELF, &p->s));
  PetscCall(VecSetSizes(p->s, n, n));
  PetscCall(VecSetType(p->s, VECSWIFT));
  PetscCall(VecCreateSeq(PETSC_COMM_SELF, n, &p->t));
  PetscFunctionReturn(0);
}

static PetscErrorCode pair_destroy(pair *p) {
  PetscFunctionBeginUser;
  PetscCall(VecDestroy(&p->s));
  PetscCall(VecDestroy(&p->t));
  PetscFunctionReturn(0);
}

/* random entries (zeros where zero_every divides i) written through the host array */
static PetscErrorCode pair_fill(pair *p, double scale, int zero_every) {
  PetscScalar *a, *b;
  PetscInt n;
  PetscFunctionBeginUser;
  PetscCall(VecGetLocalSize(p->s, &n));
  PetscCall(VecGetArray(p->s, &a));
  PetscCall(VecGetArray(p->t, &b));
  for (PetscInt i = 0; i < n; i++)
    a[i] = b[i] = zero_every && i % zero_every == 0 ? 0.0 : scale * urand();
  PetscCall(VecRestoreArray(p->s, &a));
  PetscCall(VecRestoreArray(p->t, &b));
  PetscFunctionReturn(0);
}

/* an operation on the backend copy (x *= 1.5 on both twins): afterwards the seqswift's host
 * array is stale */
static PetscErrorCode pair_dirty(pair *p) {
  PetscFunctionBeginUser;
  PetscCall(VecScale(p->s, 1.5));
  PetscCall(VecScale(p->t, 1.5));
  PetscFunctionReturn(0);
}

#define CHECK_PAIR(p, what)                                                                        \
  EXPECT(cmp_arrays((p).s, (p).t) <= TOL, "n=%d %s: %.3g", (int)n, what, cmp_arrays((p).s, (p).t))

static PetscErrorCode vector_ops(PetscInt n) {
  pair x, y, z, w, v[7];
  PetscScalar ds, dt;
  PetscReal ns[2], nt[2];
  PetscFunctionBeginUser;
  PetscCall(pair_create(n, &x));
  PetscCall(pair_create(n, &y));
  PetscCall(pair_create(n, &z));
  PetscCall(pair_create(n, &w));
  for (int j = 0; j < 7; j++) PetscCall(pair_create(n, &v[j]));
  EXPECT(is_swift(x.s), "VecSetType(swift) does not give seqswift");
  PetscCall(pair_fill(&x, 1.0, 0));
  PetscCall(pair_fill(&y, 1.0, 0));
  PetscCall(pair_fill(&z, 1.0, 0));
  PetscCall(pair_fill(&w, 1.0, 7));
  for (int j = 0; j < 7; j++) PetscCall(pair_fill(&v[j], 1.0, 0));
  CHECK_PAIR(x, "fill");

  /* the operations on the backend copies */
  const double coef[] = {0.0, 1.0, -0.75, 2.5};
  for (int a = 0; a < 4; a++) {
    for (int b = 0; b < 4; b++) {
      PetscScalar al = coef[a], be = coef[b], ga = coef[(a + b) % 4];
      PetscCall(VecAXPY(y.s, al, x.s));
      PetscCall(VecAXPY(y.t, al, x.t));
      CHECK_PAIR(y, "VecAXPY");
      PetscCall(VecAYPX(y.s, al, x.s));
      PetscCall(VecAYPX(y.t, al, x.t));
      CHECK_PAIR(y, "VecAYPX");
      PetscCall(VecAXPBY(y.s, al, be, x.s));
      PetscCall(VecAXPBY(y.t, al, be, x.t));
      CHECK_PAIR(y, "VecAXPBY");
      PetscCall(VecWAXPY(z.s, al, x.s, y.s));
      PetscCall(VecWAXPY(z.t, al, x.t, y.t));
      CHECK_PAIR(z, "VecWAXPY");
      PetscCall(VecAXPBYPCZ(z.s, al, be, ga, x.s, y.s));
      PetscCall(VecAXPBYPCZ(z.t, al, be, ga, x.t, y.t));
      CHECK_PAIR(z, "VecAXPBYPCZ");
    }
    PetscCall(VecScale(z.s, coef[a]));
    PetscCall(VecScale(z.t, coef[a]));
    CHECK_PAIR(z, "VecScale");
    PetscCall(VecShift(z.s, coef[a]));
    PetscCall(VecShift(z.t, coef[a]));
    CHECK_PAIR(z, "VecShift");
    PetscCall(VecSet(z.s, coef[a] + 1));
    PetscCall(VecSet(z.t, coef[a] + 1));
    CHECK_PAIR(z, "VecSet");
  }
  for (int nv = 1; nv <= 7; nv++) {
    PetscScalar al[7];
    Vec xs[7], xt[7];
    for (int j = 0; j < nv; j++) al[j] = j % 3 == 1 ? 0.0 : urand(), xs[j] = v[j].s, xt[j] = v[j].t;
    PetscCall(pair_dirty(&y));
    PetscCall(VecMAXPY(y.s, nv, al, xs));
    PetscCall(VecMAXPY(y.t, nv, al, xt));
    CHECK_PAIR(y, "VecMAXPY");
    PetscScalar ms[7], mt[7];
    PetscCall(VecMDot(y.s, nv, xs, ms));
    PetscCall(VecMDot(y.t, nv, xt, mt));
    for (int j = 0; j < nv; j++) EXPECT(rel(ms[j], mt[j]) <= 1e-12, "n=%d VecMDot[%d]", (int)n, j);
    PetscCall(VecMTDot(y.s, nv, xs, ms));
    PetscCall(VecMTDot(y.t, nv, xt, mt));
    for (int j = 0; j < nv; j++) EXPECT(rel(ms[j], mt[j]) <= 1e-12, "n=%d VecMTDot[%d]", (int)n, j);
    /* one vector of another type: VECSEQ's operation through the accessors */
    xs[nv - 1] = v[nv - 1].t;
    PetscCall(pair_dirty(&y));
    PetscCall(VecMDot(y.s, nv, xs, ms));
    PetscCall(VecMDot(y.t, nv, xt, mt));
    for (int j = 0; j < nv; j++)
      EXPECT(rel(ms[j], mt[j]) <= 1e-12, "n=%d mixed VecMDot[%d]", (int)n, j);
    PetscCall(VecMAXPY(y.s, nv, al, xs));
    PetscCall(VecMAXPY(y.t, nv, al, xt));
    CHECK_PAIR(y, "mixed VecMAXPY");
  }
  PetscCall(pair_dirty(&x));
  PetscCall(VecDot(x.s, y.s, &ds));
  PetscCall(VecDot(x.t, y.t, &dt));
  EXPECT(rel(ds, dt) <= 1e-12, "n=%d VecDot %g %g", (int)n, ds, dt);
  PetscCall(VecTDot(x.s, y.s, &ds));
  PetscCall(VecTDot(x.t, y.t, &dt));
  EXPECT(rel(ds, dt) <= 1e-12, "n=%d VecTDot", (int)n);
  {
    PetscScalar d2s, d2t;
    PetscCall(VecDotNorm2(x.s, y.s, &ds, &d2s));
    PetscCall(VecDotNorm2(x.t, y.t, &dt, &d2t));
    EXPECT(rel(ds, dt) <= 1e-12 && rel(d2s, d2t) <= 1e-12, "n=%d VecDotNorm2", (int)n);
  }
  const double scales[] = {1.0, 1e200, 1e-200};
  for (int sc = 0; sc < 3; sc++) {
    PetscCall(pair_fill(&z, scales[sc], 5));
    PetscCall(pair_dirty(&z));
    /* references in long double: VECSEQ's 2-norm is the square root of a plain sum of squares,
     * which overflows at 1e200 and underflows at 1e-200; ours rescales */
    long double r1 = 0, r2 = 0, ri = 0;
    const PetscScalar *h;
    PetscCall(VecGetArrayRead(z.t, &h));
    for (PetscInt i = 0; i < n; i++) {
      long double e = fabsl((long double)h[i]);
      r1 += e, r2 += e * e, ri = e > ri ? e : ri;
    }
    PetscCall(VecRestoreArrayRead(z.t, &h));
    double ref[] = {(double)r1, (double)sqrtl(r2), (double)ri};
    NormType types[] = {NORM_1, NORM_2, NORM_INFINITY, NORM_1_AND_2, NORM_FROBENIUS};
    int which[] = {0, 1, 2, 0, 1};
    for (int k = 0; k < 5; k++) {
      PetscCall(VecNorm(z.s, types[k], ns));
      EXPECT(rel(ns[0], ref[which[k]]) <= 1e-12, "n=%d scale %g VecNorm type %d: %g vs %g", (int)n,
             scales[sc], (int)types[k], ns[0], ref[which[k]]);
      if (types[k] == NORM_1_AND_2)
        EXPECT(rel(ns[1], ref[1]) <= 1e-12, "n=%d VecNorm 1_AND_2 [1]", (int)n);
      if (sc == 0) { /* and VECSEQ itself where its sums are in range */
        PetscCall(VecNorm(z.t, types[k], nt));
        EXPECT(rel(ns[0], nt[0]) <= 1e-12, "n=%d VecNorm type %d against VECSEQ", (int)n,
               (int)types[k]);
      }
    }
    PetscCall(pair_dirty(&z));
  }
  if (n > 2) { /* NaN reaches the norms */
    PetscCall(VecSetValue(z.s, 1, NAN, INSERT_VALUES));
    PetscCall(VecAssemblyBegin(z.s));
    PetscCall(VecAssemblyEnd(z.s));
    PetscCall(VecScale(z.s, 2.0)); /* on the backend copy */
    PetscCall(VecNorm(z.s, NORM_INFINITY, ns));
    EXPECT(ns[0] != ns[0], "n=%d NaN lost by NORM_INFINITY (%g)", (int)n, ns[0]);
    PetscCall(VecNorm(z.s, NORM_2, ns));
    EXPECT(ns[0] != ns[0], "n=%d NaN lost by NORM_2 (%g)", (int)n, ns[0]);
  }
  PetscCall(pair_fill(&z, 1.0, 0));
  PetscCall(pair_dirty(&w));
  PetscCall(VecPointwiseMult(z.s, x.s, w.s));
  PetscCall(VecPointwiseMult(z.t, x.t, w.t));
  CHECK_PAIR(z, "VecPointwiseMult");
  PetscCall(VecPointwiseMult(z.s, z.s, y.s));
  PetscCall(VecPointwiseMult(z.t, z.t, y.t));
  CHECK_PAIR(z, "VecPointwiseMult in place");
  PetscCall(VecPointwiseDivide(z.s, x.s, w.s));
  PetscCall(VecPointwiseDivide(z.t, x.t, w.t));
  CHECK_PAIR(z, "VecPointwiseDivide (zeros in the divisor)");
  PetscCall(VecPointwiseMult(z.s, x.t, y.s));
  PetscCall(VecPointwiseMult(z.t, x.t, y.t));
  CHECK_PAIR(z, "mixed VecPointwiseMult");
  PetscCall(pair_dirty(&x));
  PetscCall(VecCopy(x.s, z.s));
  PetscCall(VecCopy(x.t, z.t));
  CHECK_PAIR(z, "VecCopy");
  PetscCall(pair_fill(&x, 1.0, 0)); /* host only now: the host-to-host copy */
  PetscCall(VecCopy(x.s, z.s));
  PetscCall(VecCopy(x.t, z.t));
  PetscCall(VecScale(z.s, -1.0));
  PetscCall(VecScale(z.t, -1.0));
  CHECK_PAIR(z, "VecCopy of a host-only vector");
  PetscCall(pair_dirty(&y));
  PetscCall(VecCopy(y.s, x.t));
  PetscCall(VecCopy(y.t, x.s)); /* across the types */
  CHECK_PAIR(x, "VecCopy across types");
  PetscCall(pair_dirty(&x));
  PetscCall(pair_dirty(&y));
  PetscCall(VecSwap(x.s, y.s));
  PetscCall(VecSwap(x.t, y.t));
  CHECK_PAIR(x, "VecSwap x");
  CHECK_PAIR(y, "VecSwap y");
  PetscCall(VecAXPY(x.s, 0.5, y.t));
  PetscCall(VecAXPY(x.t, 0.5, y.t));
  CHECK_PAIR(x, "mixed VecAXPY (seq argument)");
  PetscCall(pair_dirty(&y));
  PetscCall(VecAXPY(z.t, 0.5, y.s));
  PetscCall(VecAXPY(z.s, 0.5, y.t)); /* seq receives swift */
  CHECK_PAIR(z, "mixed VecAXPY (seq receiver)");
  { /* a VECSEQ operand's backend copy follows its changes (state, placed array) */
    PetscScalar *h;
    for (int round = 0; round < 3; round++) {
      PetscCall(pair_dirty(&x));
      PetscCall(VecAXPY(x.s, 0.5, w.t));
      PetscCall(VecAXPY(x.t, 0.5, w.t));
      CHECK_PAIR(x, "VecAXPY with a VECSEQ operand");
      if (round == 0) { /* through the array */
        PetscCall(VecGetArray(w.t, &h));
        for (PetscInt i = 0; i < n; i++) h[i] += 1.0;
        PetscCall(VecRestoreArray(w.t, &h));
      } else if (round == 1 && n > 0) { /* through VecSetValue */
        PetscCall(VecSetValue(w.t, n - 1, 42.0, INSERT_VALUES));
        PetscCall(VecAssemblyBegin(w.t));
        PetscCall(VecAssemblyEnd(w.t));
      }
    }
  }
  { /* a duplicate of a VECSEQ operand inherits its composed objects: both in one operation */
    Vec w2;
    PetscCall(VecDuplicate(w.t, &w2));
    PetscCall(VecSet(w2, 3.0));
    PetscCall(pair_dirty(&x));
    PetscCall(VecAXPBYPCZ(x.s, 1.0, -1.0, 0.5, w.t, w2));
    PetscCall(VecAXPBYPCZ(x.t, 1.0, -1.0, 0.5, w.t, w2));
    CHECK_PAIR(x, "VecAXPBYPCZ with a VECSEQ and its duplicate");
    PetscCall(VecDestroy(&w2));
  }
  PetscCall(VecDot(x.t, y.s, &ds));
  PetscCall(VecDot(x.t, y.t, &dt));
  EXPECT(rel(ds, dt) <= 1e-12, "n=%d mixed VecDot", (int)n);

  /* operations we inherit from VECSEQ: they must see the backend copy's entries */
  PetscReal rs, rt;
  PetscInt is, it;
  PetscCall(pair_dirty(&x));
  PetscCall(VecSum(x.s, &ds));
  PetscCall(VecSum(x.t, &dt));
  EXPECT(rel(ds, dt) <= 1e-12, "n=%d VecSum", (int)n);
  PetscCall(pair_dirty(&x));
  PetscCall(VecMax(x.s, &is, &rs));
  PetscCall(VecMax(x.t, &it, &rt));
  EXPECT(is == it && rel(rs, rt) <= TOL, "n=%d VecMax", (int)n);
  PetscCall(pair_dirty(&x));
  PetscCall(VecMin(x.s, &is, &rs));
  PetscCall(VecMin(x.t, &it, &rt));
  EXPECT(is == it && rel(rs, rt) <= TOL, "n=%d VecMin", (int)n);
  PetscCall(pair_dirty(&x));
  PetscCall(VecAbs(x.s));
  PetscCall(VecAbs(x.t));
  CHECK_PAIR(x, "VecAbs");
  PetscCall(pair_dirty(&x));
  PetscCall(VecReciprocal(x.s));
  PetscCall(VecReciprocal(x.t));
  CHECK_PAIR(x, "VecReciprocal");
  PetscCall(pair_dirty(&x));
  PetscCall(pair_dirty(&y));
  PetscCall(VecPointwiseMax(z.s, x.s, y.s));
  PetscCall(VecPointwiseMax(z.t, x.t, y.t));
  CHECK_PAIR(z, "VecPointwiseMax");
  PetscCall(pair_dirty(&x));
  PetscCall(pair_dirty(&y));
  PetscCall(VecPointwiseMin(z.s, x.s, y.s));
  PetscCall(VecPointwiseMin(z.t, x.t, y.t));
  CHECK_PAIR(z, "VecPointwiseMin");
  PetscCall(pair_dirty(&x));
  PetscCall(pair_dirty(&y));
  PetscCall(VecPointwiseMaxAbs(z.s, x.s, y.s));
  PetscCall(VecPointwiseMaxAbs(z.t, x.t, y.t));
  CHECK_PAIR(z, "VecPointwiseMaxAbs");
  PetscCall(pair_dirty(&x));
  PetscCall(VecMaxPointwiseDivide(x.s, y.s, &rs));
  PetscCall(VecMaxPointwiseDivide(x.t, y.t, &rt));
  EXPECT(rel(rs, rt) <= 1e-14, "n=%d VecMaxPointwiseDivide", (int)n);
  if (n > 3) {
    PetscInt idx[3] = {0, n / 2, n - 1};
    PetscScalar vals[3] = {3.0, -4.0, 5.0}, gs[3], gt[3];
    const InsertMode modes[2] = {INSERT_VALUES, ADD_VALUES};
    for (int k = 0; k < 2; k++) {
      Vec both[2] = {x.s, x.t};
      PetscCall(pair_dirty(&x));
      for (int b = 0; b < 2; b++) {
        PetscCall(VecSetValues(both[b], 3, idx, vals, modes[k]));
        PetscCall(VecAssemblyBegin(both[b]));
        PetscCall(VecAssemblyEnd(both[b]));
      }
      CHECK_PAIR(x, k ? "VecSetValues ADD" : "VecSetValues INSERT");
    }
    PetscCall(pair_dirty(&x));
    PetscCall(VecGetValues(x.s, 3, idx, gs));
    PetscCall(VecGetValues(x.t, 3, idx, gt));
    EXPECT(gs[0] == gt[0] && gs[1] == gt[1] && gs[2] == gt[2], "n=%d VecGetValues", (int)n);
    /* a sub-vector, changed through its own operations */
    IS iss;
    Vec subs, subt;
    PetscCall(ISCreateStride(PETSC_COMM_SELF, n / 2, 1, 2, &iss));
    PetscCall(pair_dirty(&x));
    PetscCall(VecGetSubVector(x.s, iss, &subs));
    PetscCall(VecGetSubVector(x.t, iss, &subt));
    PetscCall(VecScale(subs, -3.0));
    PetscCall(VecScale(subt, -3.0));
    PetscCall(VecRestoreSubVector(x.s, iss, &subs));
    PetscCall(VecRestoreSubVector(x.t, iss, &subt));
    CHECK_PAIR(x, "VecGetSubVector / VecRestoreSubVector");
    PetscCall(ISDestroy(&iss));
  }
  { /* VecPlaceArray / VecResetArray: the placed array is used, the original comes back */
    PetscScalar *buf_s, *buf_t;
    PetscCall(PetscMalloc1(n + 1, &buf_s));
    PetscCall(PetscMalloc1(n + 1, &buf_t));
    for (PetscInt i = 0; i < n; i++) buf_s[i] = buf_t[i] = (double)i - 3.0;
    PetscCall(pair_dirty(&x));
    PetscCall(VecPlaceArray(x.s, buf_s));
    PetscCall(VecPlaceArray(x.t, buf_t));
    PetscCall(VecScale(x.s, 2.0));
    PetscCall(VecScale(x.t, 2.0));
    PetscCall(VecAXPY(x.s, 1.0, y.s));
    PetscCall(VecAXPY(x.t, 1.0, y.t));
    CHECK_PAIR(x, "placed array");
    PetscCall(VecResetArray(x.s));
    PetscCall(VecResetArray(x.t));
    double e = 0, mx = 0;
    for (PetscInt i = 0; i < n; i++)
      e = fmax(e, fabs(buf_s[i] - buf_t[i])), mx = fmax(mx, fabs(buf_t[i]));
    EXPECT(e <= TOL * mx, "n=%d the placed array holds the result after VecResetArray", (int)n);
    CHECK_PAIR(x, "VecResetArray");
    PetscCall(PetscFree(buf_s));
    PetscCall(PetscFree(buf_t));
  }
  { /* VecGetArrayWrite: the host array becomes the current copy */
    PetscScalar *a, *b;
    PetscCall(pair_dirty(&x));
    PetscCall(VecGetArrayWrite(x.s, &a));
    PetscCall(VecGetArrayWrite(x.t, &b));
    /* the entries are current although the caller is to overwrite them (hypre reads them) */
    double e = 0;
    for (PetscInt i = 0; i < n; i++) e = fmax(e, fabs(a[i] - b[i]) / (fabs(b[i]) + 1e-300));
    EXPECT(e <= TOL, "n=%d VecGetArrayWrite gives stale entries", (int)n);
    for (PetscInt i = 0; i < n; i++) a[i] = b[i] = 0.25 * (double)i;
    PetscCall(VecRestoreArrayWrite(x.s, &a));
    PetscCall(VecRestoreArrayWrite(x.t, &b));
    PetscCall(VecScale(x.s, 2.0));
    PetscCall(VecScale(x.t, 2.0));
    CHECK_PAIR(x, "VecGetArrayWrite");
  }
  { /* duplicates are independent seqswift vectors, and outlive the original */
    Vec d1, d2, *dv;
    PetscCall(pair_dirty(&x));
    PetscCall(VecDuplicate(x.s, &d1));
    EXPECT(is_swift(d1), "VecDuplicate keeps the type");
    PetscCall(VecCopy(x.s, d1));
    PetscCall(VecDuplicate(d1, &d2));
    PetscCall(VecSet(d2, 7.0));
    PetscCall(VecDestroy(&d1));
    PetscCall(VecDuplicateVecs(x.s, 2, &dv));
    PetscCall(VecSet(dv[0], 1.0));
    PetscCall(VecSet(dv[1], 2.0));
    PetscCall(VecAXPY(d2, -7.0, dv[0]));
    PetscCall(VecNorm(d2, NORM_INFINITY, &rs));
    EXPECT(rs == 0.0 && is_swift(dv[1]), "n=%d duplicates: %g", (int)n, rs);
    PetscCall(VecCopy(x.t, z.t));
    PetscCall(VecCopy(x.s, z.s));
    CHECK_PAIR(z, "the original after its duplicates changed");
    PetscCall(VecDestroyVecs(2, &dv));
    PetscCall(VecDestroy(&d2));
  }
  { /* a random fill through VecSetRandom (written on the host) */
    PetscRandom r1, r2;
    PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r1));
    PetscCall(PetscRandomCreate(PETSC_COMM_SELF, &r2));
    PetscCall(PetscRandomSetSeed(r1, 7));
    PetscCall(PetscRandomSetSeed(r2, 7));
    PetscCall(PetscRandomSeed(r1));
    PetscCall(PetscRandomSeed(r2));
    PetscCall(pair_dirty(&x));
    PetscCall(VecSetRandom(x.s, r1));
    PetscCall(VecSetRandom(x.t, r2));
    PetscCall(VecScale(x.s, 3.0));
    PetscCall(VecScale(x.t, 3.0));
    CHECK_PAIR(x, "VecSetRandom");
    PetscCall(PetscRandomDestroy(&r1));
    PetscCall(PetscRandomDestroy(&r2));
  }
  PetscCall(pair_destroy(&x));
  PetscCall(pair_destroy(&y));
  PetscCall(pair_destroy(&z));
  PetscCall(pair_destroy(&w));
  for (int j = 0; j < 7; j++) PetscCall(pair_destroy(&v[j]));
  PetscFunctionReturn(0);
}

/* 2-D 5-point Laplacian on an m x m grid, AIJ */
static PetscErrorCode laplacian(PetscInt m, Mat *A) {
  PetscFunctionBeginUser;
  PetscInt N = m * m;
  PetscCall(MatCreateSeqAIJ(PETSC_COMM_SELF, N, N, 5, NULL, A));
  for (PetscInt i = 0; i < m; i++)
    for (PetscInt j = 0; j < m; j++) {
      PetscInt r = i * m + j;
      PetscCall(MatSetValue(*A, r, r, 4.0 + 0.01 * (double)(r % 7), INSERT_VALUES));
      if (i > 0) PetscCall(MatSetValue(*A, r, r - m, -1.0, INSERT_VALUES));
      if (i < m - 1) PetscCall(MatSetValue(*A, r, r + m, -1.0, INSERT_VALUES));
      if (j > 0) PetscCall(MatSetValue(*A, r, r - 1, -1.0, INSERT_VALUES));
      if (j < m - 1) PetscCall(MatSetValue(*A, r, r + 1, -1.0, INSERT_VALUES));
    }
  PetscCall(MatAssemblyBegin(*A, MAT_FINAL_ASSEMBLY));
  PetscCall(MatAssemblyEnd(*A, MAT_FINAL_ASSEMBLY));
  PetscFunctionReturn(0);
}

/* the products of seqaijswift on seqswift vectors (no copies) against AIJ on VECSEQ, outputs
 * poisoned; then CG + Jacobi through KSP on both */
static PetscErrorCode products_and_solve(PetscInt m) {
  Mat A, S;
  pair x, y, z;
  PetscInt N = m * m, n = N;
  PetscFunctionBeginUser;
  PetscCall(laplacian(m, &A));
  PetscCall(MatConvert(A, MATSEQAIJSWIFT, MAT_INITIAL_MATRIX, &S));
  PetscCall(pair_create(N, &x));
  PetscCall(pair_create(N, &y));
  PetscCall(pair_create(N, &z));
  PetscCall(pair_fill(&x, 1.0, 0));
  PetscCall(pair_fill(&y, 1.0, 0));
  PetscCall(pair_dirty(&x));
  PetscCall(VecSet(z.s, NAN));
  PetscCall(MatMult(S, x.s, z.s));
  PetscCall(MatMult(A, x.t, z.t));
  CHECK_PAIR(z, "MatMult");
  PetscCall(VecSet(z.s, NAN));
  PetscCall(MatMultAdd(S, x.s, y.s, z.s));
  PetscCall(MatMultAdd(A, x.t, y.t, z.t));
  CHECK_PAIR(z, "MatMultAdd");
  PetscCall(MatMultAdd(S, x.s, z.s, z.s));
  PetscCall(MatMultAdd(A, x.t, z.t, z.t));
  CHECK_PAIR(z, "MatMultAdd in place");
  PetscCall(VecSet(z.s, NAN));
  PetscCall(MatMultTranspose(S, x.s, z.s));
  PetscCall(MatMultTranspose(A, x.t, z.t));
  CHECK_PAIR(z, "MatMultTranspose");
  PetscCall(MatMultTransposeAdd(S, x.s, y.s, z.s));
  PetscCall(MatMultTransposeAdd(A, x.t, y.t, z.t));
  CHECK_PAIR(z, "MatMultTransposeAdd");
  PetscCall(MatMult(S, x.t, z.s));
  PetscCall(MatMult(A, x.t, z.t)); /* mixed: the host path */
  CHECK_PAIR(z, "MatMult VECSEQ -> seqswift");
  PetscCall(pair_dirty(&x));
  PetscCall(VecSet(z.t, NAN));
  PetscCall(MatMult(S, x.s, y.t));
  PetscCall(MatMult(A, x.t, z.t));
  EXPECT(cmp_arrays(y.t, z.t) <= TOL, "MatMult seqswift -> VECSEQ");
  PetscCall(MatScale(S, 2.0));
  PetscCall(MatScale(A, 2.0)); /* new values reach the product */
  PetscCall(MatMult(S, x.s, z.s));
  PetscCall(MatMult(A, x.t, z.t));
  CHECK_PAIR(z, "MatMult after MatScale");

  /* CG + Jacobi: the same iterations and solution */
  KSP ks, kt;
  PetscInt its, itt;
  PetscCall(VecSet(x.s, 0.0));
  PetscCall(VecSet(x.t, 0.0));
  PetscCall(pair_fill(&y, 1.0, 0));
  PetscCall(KSPCreate(PETSC_COMM_SELF, &ks));
  PetscCall(KSPCreate(PETSC_COMM_SELF, &kt));
  PetscCall(KSPSetOperators(ks, S, S));
  PetscCall(KSPSetOperators(kt, A, A));
  KSP both[2] = {ks, kt};
  for (int k = 0; k < 2; k++) {
    PC pc;
    PetscCall(KSPSetType(both[k], KSPCG));
    PetscCall(KSPGetPC(both[k], &pc));
    PetscCall(PCSetType(pc, PCJACOBI));
    PetscCall(KSPSetTolerances(both[k], 1e-10, PETSC_DEFAULT, PETSC_DEFAULT, 1000));
  }
  PetscCall(KSPSolve(ks, y.s, x.s));
  PetscCall(KSPSolve(kt, y.t, x.t));
  PetscCall(KSPGetIterationNumber(ks, &its));
  PetscCall(KSPGetIterationNumber(kt, &itt));
  EXPECT(its == itt && its > 5, "CG + Jacobi iterations: seqswift %d, VECSEQ %d", (int)its,
         (int)itt);
  EXPECT(cmp_arrays(x.s, x.t) <= 1e-8, "CG + Jacobi solutions differ by %.3g",
         cmp_arrays(x.s, x.t));
  PetscCall(KSPDestroy(&ks));
  PetscCall(KSPDestroy(&kt));
  PetscCall(pair_destroy(&x));
  PetscCall(pair_destroy(&y));
  PetscCall(pair_destroy(&z));
  PetscCall(MatDestroy(&S));
  PetscCall(MatDestroy(&A));
  PetscFunctionReturn(0);
}

int main(int argc, char **argv) {
  if (skip_without_gpu()) return 77;
  PetscCall(PetscInitialize(&argc, &argv, NULL, NULL));
  PetscCall(coal_petsc_register());
  const PetscInt sizes[] = {0, 1, 2, 17, 1000, 100003};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) PetscCall(vector_ops(sizes[i]));
  { /* -vec_type swift through the options */
    Vec v;
    PetscCall(PetscOptionsSetValue(NULL, "-vec_type", "swift"));
    PetscCall(VecCreate(PETSC_COMM_SELF, &v));
    PetscCall(VecSetSizes(v, 10, 10));
    PetscCall(VecSetFromOptions(v));
    EXPECT(is_swift(v), "-vec_type swift does not give seqswift");
    PetscCall(VecDestroy(&v));
    PetscCall(PetscOptionsClearValue(NULL, "-vec_type"));
  }
  PetscCall(products_and_solve(40));
  printf("test_petsc_vec: %d checks, %d failures\n", checks, failures);
  PetscCall(PetscFinalize());
  return failures ? 1 : 0;
}
