double sum, dx, x;
for (int i = 0; i < N; ++i) {
  x = (i + 0.5) * dx;
  sum = sum + 4.0 / (1.0 + x * x);
}
