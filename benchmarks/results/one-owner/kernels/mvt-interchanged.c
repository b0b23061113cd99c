/* mvt's second product x2 = A^T y2 with the loops interchanged: x2 reused across i */
double A[N][N];
double x2[N], y2[N];

for (int i = 0; i < N; ++i)
    for (int j = 0; j < N; ++j)
        x2[j] = x2[j] + A[i][j] * y2[i];
