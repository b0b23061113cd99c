/* PCG: squared norm n += x[i]*x[i] over the whole grid (§5.1): one load, one FMA. */
double x[NN];
double n;

for (int i = 0; i < NN; ++i)
    n += x[i] * x[i];
