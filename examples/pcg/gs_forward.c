/* PCG preconditioner: symmetric Gauss-Seidel, forward sweep (D+L) x = r (§5.1, Algorithm 3):
   two FMAs, one multiplication, one store, three loads. x[j][i-1] is written one iteration
   earlier: a loop-carried dependency (critical path FMA + MUL, Fig. 4). */
double x[M][N], r[M][N];
double c, inv_d;

for (int j = 1; j < M - 1; ++j)
    for (int i = 1; i < N - 1; ++i)
        x[j][i] = (r[j][i] + c * x[j - 1][i] + c * x[j][i - 1]) * inv_d;
