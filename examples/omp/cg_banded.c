/* Conjugate gradient on a symmetric tridiagonal matrix stored as three bands
 * (row i: al[i] * p[i-1] + ad[i] * p[i] + au[i] * p[i+1]). The search direction p is padded
 * by one zero on each side (p[i + 1] holds element i) so the matrix-vector product needs no
 * branch at the ends. All arrays are first touched by static parallel loops; each of the
 * ITERS iterations is q = A p, pq = p.q, x += alpha p, r -= alpha q, rho = r.r, p = r + beta p.
 * The scalar statements between the loops (alpha = rho / pq; ...) do not touch memory: the
 * model ignores them, the measurement harness runs them in program order. */
#define N 200000
#define ITERS 3
double ad[N], al[N], au[N];
double x[N], b[N], r[N], q[N];
double p[N + 2];
double rho, rho_old, pq, alpha, beta;

/* first touch: the padding of p, then every array by the thread that later uses its chunk */
#pragma omp parallel for schedule(static)
for (int i = 0; i < N + 2; ++i)
    p[i] = 0.0;

#pragma omp parallel for schedule(static)
for (int i = 0; i < N; ++i) {
    ad[i] = 4.0;
    al[i] = -1.0;
    au[i] = -1.0;
    b[i] = 1.0;
    x[i] = 0.0;
    r[i] = b[i];
    p[i + 1] = r[i];
}

rho = 0.0;
#pragma omp parallel for reduction(+:rho) schedule(static)
for (int i = 0; i < N; ++i)
    rho += r[i] * r[i];

for (int it = 0; it < ITERS; ++it) {
    #pragma omp parallel for schedule(static)
    for (int i = 0; i < N; ++i)
        q[i] = al[i] * p[i] + ad[i] * p[i + 1] + au[i] * p[i + 2];

    pq = 0.0;
    #pragma omp parallel for reduction(+:pq) schedule(static)
    for (int i = 0; i < N; ++i)
        pq += p[i + 1] * q[i];

    alpha = rho / pq;
    #pragma omp parallel for schedule(static)
    for (int i = 0; i < N; ++i) {
        x[i] += alpha * p[i + 1];
        r[i] -= alpha * q[i];
    }

    rho_old = rho;
    rho = 0.0;
    #pragma omp parallel for reduction(+:rho) schedule(static)
    for (int i = 0; i < N; ++i)
        rho += r[i] * r[i];

    beta = rho / rho_old;
    #pragma omp parallel for schedule(static)
    for (int i = 0; i < N; ++i)
        p[i + 1] = r[i] + beta * p[i + 1];
}
