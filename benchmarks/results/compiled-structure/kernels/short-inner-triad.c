/* short inner loop (12 iterations): triad per row */
double a[M][NI], b[M][NI], c[M][NI];
double s;
for (int j = 0; j < M; ++j)
    for (int i = 0; i < NI; ++i)
        a[j][i] = b[j][i] + s * c[j][i];
