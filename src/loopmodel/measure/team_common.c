/* Helpers shared by loopmodel's pinned-team OpenMP benchmark programs (bandwidth.c,
 * coherence.c): the Python side appends this text to each program's source, which declares
 * them before use.
 *
 * lm_pin(list, index): pin the calling thread to the index-th number of the comma-separated
 * CPU list; 0 on success, -1 when the list has no such entry or sched_setaffinity fails.
 * lm_number(text, lo, hi, what): the whole number in text, from lo to hi; otherwise one line
 * "bad WHAT 'TEXT' (LO to HI)" on stderr and exit status 2. */
static int lm_pin(const char *list, int index)
{
    const char *q = list;
    for (int k = 0; k < index && q; ++k) {
        q = strchr(q, ',');
        if (q)
            ++q;
    }
    if (!q || !*q)
        return -1;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(atoi(q), &set);
    return sched_setaffinity(0, sizeof set, &set);
}

static long lm_number(const char *text, long lo, long hi, const char *what)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*end || end == text || v < lo || v > hi) {
        fprintf(stderr, "bad %s '%s' (%ld to %ld)\n", what, text, lo, hi);
        exit(2);
    }
    return v;
}
