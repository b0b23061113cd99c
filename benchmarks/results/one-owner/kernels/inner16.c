/* 2-D update with a 16-element inner loop */
double a[M][16], b[M][16];

for (int j = 0; j < M; ++j)
    for (int i = 0; i < 16; ++i)
        a[j][i] = b[j][i] + a[j][i];
