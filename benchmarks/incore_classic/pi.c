/* numerical integration of 4/(1+x^2) over [0,1] (compute only, no array) */
double s;
double dx;

for (int i = 0; i < N; ++i)
    s = s + 4.0 / (1.0 + ((i + 0.5) * dx) * ((i + 0.5) * dx));
