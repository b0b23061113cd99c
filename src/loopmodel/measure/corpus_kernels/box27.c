/* 27-point box stencil (3x3x3 neighbourhood), one grid of L x L x L doubles in, one out */
double a[L][L][L], b[L][L][L];
double s;
for (int k = 1; k < L-1; ++k)
  for (int j = 1; j < L-1; ++j)
    for (int i = 1; i < L-1; ++i)
      b[k][j][i] = s * (a[k-1][j-1][i-1] + a[k-1][j-1][i] + a[k-1][j-1][i+1]
                      + a[k-1][j][i-1]   + a[k-1][j][i]   + a[k-1][j][i+1]
                      + a[k-1][j+1][i-1] + a[k-1][j+1][i] + a[k-1][j+1][i+1]
                      + a[k][j-1][i-1]   + a[k][j-1][i]   + a[k][j-1][i+1]
                      + a[k][j][i-1]     + a[k][j][i]     + a[k][j][i+1]
                      + a[k][j+1][i-1]   + a[k][j+1][i]   + a[k][j+1][i+1]
                      + a[k+1][j-1][i-1] + a[k+1][j-1][i] + a[k+1][j-1][i+1]
                      + a[k+1][j][i-1]   + a[k+1][j][i]   + a[k+1][j][i+1]
                      + a[k+1][j+1][i-1] + a[k+1][j+1][i] + a[k+1][j+1][i+1]);
