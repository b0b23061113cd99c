/* PCG preconditioner: symmetric Gauss-Seidel, backward sweep (D+U) z = D y (§5.1): loops run
   in reverse and the upper neighbours are used; loop-carried dependency on z[j][i+1]. */
double z[M][N], y[M][N];
double c, d, inv_d;

for (int j = M - 2; j >= 1; --j)
    for (int i = N - 2; i >= 1; --i)
        z[j][i] = (d * y[j][i] + c * z[j + 1][i] + c * z[j][i + 1]) * inv_d;
