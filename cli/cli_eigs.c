/* `coalesce eigs`: the nev smallest or largest eigenpairs of A (or of A x = lambda M x) by
 * LOBPCG, with the helpers that bench eigs shares: option parsing, the timed solve and the
 * closed-form eigenvalues of the generated Laplacians (cli_eig_exact). */
#include "cli.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CLI_PI 3.14159265358979323846

/* ---- options ----------------------------------------------------------------------------- */

void cli_eig_opts_default(cli_eig_opts *o) {
  memset(o, 0, sizeof *o);
  o->nev = 16, o->block = 0, o->maxit = 1000, o->tol = 1e-6;
  o->which = COAL_EIG_SMALLEST, o->pc = COAL_PC_NONE, o->seed = 1;
  cli_amg_opts_default(&o->amg);
}

int cli_eig_opt(int argc, char **argv, int *i, cli_eig_opts *o) {
  const char *v = NULL;
  int64_t x = 0;
  int r = cli_amg_opt(argc, argv, i, &o->amg);
  if (r) return r;
  if ((r = cli_int_opt(argc, argv, i, "--nev", 1, 100000, &x)) != 0) {
    if (r > 0) o->nev = (int)x;
    return r;
  }
  if ((r = cli_int_opt(argc, argv, i, "--block", 0, 100000, &x)) != 0) {
    if (r > 0) o->block = (int)x;
    return r;
  }
  if ((r = cli_int_opt(argc, argv, i, "--maxit", 0, 100000000, &x)) != 0) {
    if (r > 0) o->maxit = (int)x;
    return r;
  }
  if ((r = cli_int_opt(argc, argv, i, "--seed", 0, INT64_MAX, &x)) != 0) {
    if (r > 0) o->seed = (uint64_t)x;
    return r;
  }
  if ((r = cli_opt_value(argc, argv, i, "--tol", &v)) != 0) {
    if (r > 0 && (cli_parse_f64(v, &o->tol) || !(o->tol > 0 && o->tol < 1))) {
      cli_usage_error("--tol: '%s' is not a number in (0, 1)", v);
      return -1;
    }
    return r;
  }
  if ((r = cli_opt_value(argc, argv, i, "--which", &v)) != 0) {
    if (r > 0 && coal_eig_which_parse(v, &o->which)) {
      cli_usage_error("--which: '%s' is not smallest or largest", v);
      return -1;
    }
    return r;
  }
  if ((r = cli_opt_value(argc, argv, i, "--pc", &v)) != 0) {
    if (r > 0 && coal_pc_parse(v, &o->pc)) {
      cli_usage_error("--pc: '%s' is not none, jacobi or amg", v);
      return -1;
    }
    return r;
  }
  return 0;
}

int cli_eig_check(const cli_eig_opts *o, int64_t n) {
  if (cli_amg_check(&o->amg, o->pc) != CLI_OK) return CLI_USAGE;
  if (o->block && o->block < o->nev)
    return cli_usage_error("--block %d is smaller than --nev %d", o->block, o->nev);
  if (n >= 0 && o->nev > n)
    return cli_usage_error("--nev %d exceeds the %lld rows of the matrix", o->nev, (long long)n);
  if (n >= 0 && o->block > n)
    return cli_usage_error("--block %d exceeds the %lld rows of the matrix", o->block,
                           (long long)n);
  return CLI_OK;
}

int cli_eig_blocksize(const cli_eig_opts *o, int64_t n) {
  if (o->block) return o->block;
  int64_t bs = o->nev + (o->nev / 4 > 4 ? o->nev / 4 : 4); /* coal_eigen_set_nev's rule */
  return (int)(bs < n ? bs : n);
}

/* ---- the solve --------------------------------------------------------------------------- */

int cli_eig_create(coal_mat A, coal_mat M, const cli_eig_opts *o, int history, coal_eigen *E,
                   coal_amg *amg) {
  coal_ctx ctx = coal_mat_ctx(A);
  coal_status st;
  int64_t n = 0;
  *E = NULL;
  coal_mat_size(A, &n, NULL, NULL);
  if ((st = coal_eigen_create(A, M, E))) return cli_fail(ctx, st, "creating the eigensolver");
  if ((st = coal_eigen_set_nev(*E, o->nev, o->block)) ||
      (st = coal_eigen_set_which(*E, o->which)) ||
      (st = coal_eigen_set_tolerances(*E, o->tol, o->maxit)) ||
      (o->pc != COAL_PC_AMG && (st = coal_eigen_set_pc(*E, o->pc))) ||
      (st = coal_eigen_set_seed(*E, o->seed)) ||
      (history && (st = coal_eigen_set_history(*E, 1)))) {
    coal_eigen_destroy(E);
    return cli_fail(ctx, st, "configuring the eigensolver");
  }
  if (o->pc == COAL_PC_AMG &&
      cli_amg_attach(NULL, *E, A, &o->amg, cli_eig_blocksize(o, n), amg) != CLI_OK) {
    coal_eigen_destroy(E);
    return CLI_FAIL;
  }
  return CLI_OK;
}

int cli_eig_solve(coal_eigen E, coal_ctx ctx, int nev, cli_eig_result *res) {
  coal_status st;
  memset(res, 0, sizeof *res);
  res->nev = nev;
  res->info = calloc((size_t)nev, sizeof *res->info);
  if (!res->info) return cli_fail(NULL, COAL_ERR_MEMORY, "eigensolver results");
  double t0 = coal_now_seconds();
  if ((st = coal_eigen_solve(E)) || (st = coal_ctx_sync(ctx)))
    return cli_fail(ctx, st, "LOBPCG solve");
  res->seconds = coal_now_seconds() - t0;
  if ((st = coal_eigen_get_stats(E, &res->stats))) return cli_fail(ctx, st, "solver statistics");
  res->nconverged = coal_eigen_nconverged(E);
  for (int j = 0; j < nev; j++) {
    if ((st = coal_eigen_get_info(E, j, &res->info[j])))
      return cli_fail(ctx, st, "eigenpair %d", j);
    /* NaN counts as the worst residual */
    double r = res->info[j].resnorm;
    res->max_res = isnan(r) || isnan(res->max_res) ? NAN : fmax(res->max_res, r);
  }
  return CLI_OK;
}

void cli_eig_result_free(cli_eig_result *r) {
  free(r->info);
  r->info = NULL;
}

/* ---- closed form ------------------------------------------------------------------------- */

/* Eigenvalue i (1..N) of the 1-D Dirichlet stencil [-1 2 -1], ascending: 2 - 2 cos(pi i/(N+1))
 * = 4 sin^2(pi i / (2(N+1))), written so that the small ones keep their relative accuracy;
 * from the top (`top`): the value of index N+1-i, 4 cos^2(pi i / (2(N+1))). */
static double lap1d(int64_t i, int64_t N, int top) {
  double t = CLI_PI * (double)i / (2.0 * (double)(N + 1));
  double s = top ? cos(t) : sin(t);
  return 4.0 * s * s;
}

/* The eigenvalues are sums over the dimensions d of e_d * lap1d(i_d). Each grows strictly with
 * every index, so the nev smallest are an order ideal of the index tuples and every tuple in it
 * has i_1 * i_2 * i_3 <= nev: only those are enumerated (the same from the top for largest). */
int cli_eig_exact(const cli_spec *sp, int nev, coal_eig_which which, double *exact) {
  double e[3] = {1.0, 1.0, 1.0};
  int dims = 3;
  switch (sp->kind) {
  case CLI_SPEC_LAP2D: dims = 2; break;
  case CLI_SPEC_LAP3D: break;
  case CLI_SPEC_ANISO: memcpy(e, sp->e, sizeof e); break;
  default: return 0;
  }
  int64_t N = sp->n, m = nev < N ? nev : N;
  int top = which == COAL_EIG_LARGEST;
  size_t cap = 1024, cnt = 0;
  double *v = malloc(cap * sizeof *v);
  if (!v) return -1;
  for (int64_t i = 1; i <= m; i++)
    for (int64_t j = 1; j <= m && i * j <= nev; j++)
      for (int64_t l = 1; l <= (dims == 3 ? m : 1) && i * j * l <= nev; l++) {
        if (cnt == cap) {
          double *p = realloc(v, 2 * cap * sizeof *v);
          if (!p) {
            free(v);
            return -1;
          }
          v = p, cap *= 2;
        }
        double x = e[0] * lap1d(i, N, top) + e[1] * lap1d(j, N, top);
        if (dims == 3) x += e[2] * lap1d(l, N, top);
        v[cnt++] = x;
      }
  qsort(v, cnt, sizeof *v, cli_cmp_double);
  for (int k = 0; k < nev; k++) { /* cnt >= nev whenever nev <= rows */
    double x = k < (int64_t)cnt ? v[top ? (int64_t)cnt - 1 - k : k] : NAN;
    exact[k] = x;
  }
  free(v);
  return 1;
}

double cli_eig_relerr(double value, double exact) {
  double d = fabs(value - exact);
  return exact != 0 ? d / fabs(exact) : d;
}

/* ---- coalesce eigs ----------------------------------------------------------------------- */

static int write_history(coal_eigen E, const char *path) {
  int nit = 0, nev = 0;
  const double *h = NULL;
  coal_status st = coal_eigen_get_history(E, &nit, &nev, &h);
  if (st) return cli_fail(NULL, st, "residual history");
  FILE *f = cli_open_output(path);
  if (!f) return CLI_FAIL;
  fputs("iteration", f);
  for (int j = 0; j < nev; j++) fprintf(f, ",pair_%d", j);
  fputc('\n', f);
  for (int it = 0; h && it < nit; it++) {
    fprintf(f, "%d", it);
    for (int j = 0; j < nev; j++) fprintf(f, ",%.6e", h[(size_t)it * (size_t)nev + (size_t)j]);
    fputc('\n', f);
  }
  if (fclose(f)) {
    fprintf(stderr, "coalesce eigs: cannot write %s\n", path);
    return CLI_FAIL;
  }
  return CLI_OK;
}

static int write_vectors(coal_ctx ctx, coal_eigen E, int64_t n, int nev, const char *path) {
  coal_bvec V = NULL;
  coal_status st;
  int rc = CLI_OK;
  if ((st = coal_bvec_create(ctx, n, nev, COAL_F64, COAL_COL_MAJOR, 0, &V)) ||
      (st = coal_eigen_get_vectors(E, V)) || (st = coal_bvec_write_mm(V, path)))
    rc = cli_fail(ctx, st, "writing the eigenvectors to %s", path);
  coal_bvec_destroy(&V);
  return rc;
}

static void print_pairs(const cli_eig_result *r, const double *exact) {
  printf("  %-5s %-24s %12s  %s", "pair", "eigenvalue", "rel. resid.", "converged");
  if (exact) printf("  %-24s %10s", "exact", "rel. error");
  putchar('\n');
  for (int j = 0; j < r->nev; j++) {
    const coal_eig_info *in = &r->info[j];
    printf("  %-5d %-24.15g %12.3e  %-*s", j, in->value, in->resnorm, exact ? 9 : 0,
           in->converged ? "yes" : "no");
    if (exact) printf("  %-24.15g %10.3e", exact[j], cli_eig_relerr(in->value, exact[j]));
    putchar('\n');
  }
}

static int load(coal_ctx ctx, const cli_spec *sp, coal_mat *A, int64_t *n, int64_t *nnz) {
  coal_status st = cli_spec_load(ctx, sp, COAL_F64, A);
  if (st) return cli_fail(ctx, st, "loading %s", sp->text);
  coal_mat_size(*A, n, NULL, nnz);
  return CLI_OK;
}

int cli_eigs(int argc, char **argv) {
  cli_common c = {COAL_BACKEND_AUTO, COAL_F64};
  cli_eig_opts o;
  cli_eig_opts_default(&o);
  const char *mass = NULL, *out = NULL, *hist = NULL, *spec_text = NULL;
  for (int i = 1; i < argc; i++) {
    int r = cli_parse_common(argc, argv, &i, &c);
    if (!r) r = cli_eig_opt(argc, argv, &i, &o);
    if (r < 0) return CLI_USAGE;
    if (r > 0) continue;
    if ((r = cli_opt_value(argc, argv, &i, "--mass", &mass)) ||
        (r = cli_opt_value(argc, argv, &i, "--out", &out)) ||
        (r = cli_opt_value(argc, argv, &i, "--history", &hist))) {
      if (r < 0) return CLI_USAGE;
      continue;
    }
    if (!strncmp(argv[i], "--", 2)) return cli_usage_error("eigs: unknown option '%s'", argv[i]);
    if (spec_text) return cli_usage_error("eigs: one matrix only ('%s' is extra)", argv[i]);
    spec_text = argv[i];
  }
  if (!spec_text) return cli_usage_error("eigs needs a matrix: coalesce eigs A.mtx [options]");
  if (c.dtype != COAL_F64) return cli_usage_error("eigs: the eigensolver runs in fp64");
  if (cli_eig_check(&o, -1) != CLI_OK) return CLI_USAGE;
  cli_spec sp, msp;
  if (cli_spec_parse(spec_text, &sp) != CLI_OK) return CLI_USAGE;
  if (mass && cli_spec_parse(mass, &msp) != CLI_OK) return CLI_USAGE;

  coal_ctx ctx = NULL;
  coal_mat A = NULL, M = NULL;
  coal_eigen E = NULL;
  coal_amg amg = NULL;
  cli_eig_result res = {0};
  double *exact = NULL;
  int64_t n = 0, nnz = 0, mn = 0, mnnz = 0;
  int rc = cli_ctx_create(c.backend, &ctx);
  if (rc == CLI_OK) rc = load(ctx, &sp, &A, &n, &nnz);
  if (rc == CLI_OK && mass) rc = load(ctx, &msp, &M, &mn, &mnnz);
  if (rc == CLI_OK && mass && mn != n) {
    fprintf(stderr, "coalesce eigs: the mass matrix %s has %lld rows, the matrix has %lld\n",
            msp.name, (long long)mn, (long long)n);
    rc = CLI_FAIL;
  }
  if (rc == CLI_OK) rc = cli_eig_check(&o, n);
  if (rc == CLI_OK && !mass && !(exact = malloc(sizeof *exact * (size_t)o.nev)))
    rc = cli_fail(NULL, COAL_ERR_MEMORY, "exact eigenvalues");
  if (rc == CLI_OK && exact) {
    int have = cli_eig_exact(&sp, o.nev, o.which, exact);
    if (have < 0) rc = cli_fail(NULL, COAL_ERR_MEMORY, "exact eigenvalues");
    if (have <= 0) free(exact), exact = NULL;
  }
  if (rc == CLI_OK) {
    char desc[256];
    cli_spec_describe(&sp, desc, sizeof desc);
    printf("coalesce eigs: %s, %lld rows, %lld nonzeros\n", sp.name, (long long)n, (long long)nnz);
    printf("  %-10s %s\n", "matrix", desc);
    if (mass)
      printf("  %-10s A x = lambda M x, M = %s (%lld nonzeros)\n", "problem", msp.name,
             (long long)mnnz);
    else
      printf("  %-10s A x = lambda x\n", "problem");
    printf("  %-10s LOBPCG, %d %s eigenpairs, block size %d, preconditioner %s\n", "method", o.nev,
           coal_eig_which_name(o.which), cli_eig_blocksize(&o, n), coal_pc_name(o.pc));
    if (o.pc == COAL_PC_AMG) {
      char opts[160];
      cli_amg_describe(&o.amg, opts, sizeof opts);
      printf("  %-10s %s (%s)\n", "amg", opts,
             o.amg.given ? "built here, a user preconditioner" : "the library's defaults");
    }
    printf("  %-10s tol %.1e, maxit %d, seed %llu\n", "stopping", o.tol, o.maxit,
           (unsigned long long)o.seed);
    printf("  %-10s %s (%s)\n", "backend", coal_backend_name(coal_ctx_backend(ctx)),
           coal_ctx_device_name(ctx));
  }
  double t0 = coal_now_seconds(), wall = 0;
  if (rc == CLI_OK) rc = cli_eig_create(A, M, &o, hist != NULL, &E, &amg);
  if (rc == CLI_OK) rc = cli_eig_solve(E, ctx, o.nev, &res);
  wall = coal_now_seconds() - t0;
  if (rc == CLI_OK) print_pairs(&res, exact);
  if (rc == CLI_OK && exact) {
    double worst = 0;
    for (int j = 0; j < o.nev; j++)
      worst = fmax(worst, cli_eig_relerr(res.info[j].value, exact[j]));
    printf("  %-10s largest relative eigenvalue error against the closed form %.3e\n", "exact",
           worst);
  }
  if (rc == CLI_OK) {
    const coal_eigen_stats *s = &res.stats;
    printf("  %-10s %d iterations, %d of %d converged, %d restarts, %lld A-products\n", "result",
           s->iterations, res.nconverged, o.nev, s->restarts, (long long)s->spmm_a);
    printf("  %-10s %.3f s wall (setup + solve, synchronised), of which dense Rayleigh-Ritz "
           "%.3f s\n",
           "time", wall, s->rr_seconds);
  }
  if (rc == CLI_OK && out && (rc = write_vectors(ctx, E, n, o.nev, out)) == CLI_OK)
    printf("  %-10s eigenvectors written to %s (%lld x %d)\n", "output", out, (long long)n, o.nev);
  if (rc == CLI_OK && hist && (rc = write_history(E, hist)) == CLI_OK)
    printf("  %-10s residual history written to %s\n", "history", hist);
  if (rc == CLI_OK && res.nconverged < o.nev) {
    fprintf(stderr,
            "coalesce eigs: %d of %d eigenpairs did not converge to tol %.1e within %d "
            "iterations\n",
            o.nev - res.nconverged, o.nev, o.tol, o.maxit);
    rc = CLI_FAIL;
  }
  cli_eig_result_free(&res);
  free(exact);
  coal_eigen_destroy(&E);
  coal_amg_destroy(&amg);
  coal_mat_destroy(&M);
  coal_mat_destroy(&A);
  coal_ctx_destroy(&ctx);
  return rc;
}
