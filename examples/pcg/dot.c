/* PCG: dot product d += x[i]*y[i] over the whole grid (§5.1): two loads, one FMA. */
double x[NN], y[NN];
double d;

for (int i = 0; i < NN; ++i)
    d += x[i] * y[i];
