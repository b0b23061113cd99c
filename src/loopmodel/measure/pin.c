/* Pinning shared by loopmodel's OpenMP benchmark programs (bandwidth.c, coherence.c): the
 * Python side appends this text to each program's source, which declares lm_pin before use.
 *
 * lm_pin(list, index): pin the calling thread to the index-th number of the comma-separated
 * CPU list; 0 on success, -1 when the list has no such entry or sched_setaffinity fails. */
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
