"""Slow, obviously-correct pure-Python transcription of the cache-simulator semantics
(src/loopmodel/cachesim/__init__.py, module docstring). Used only by the tests."""
from __future__ import annotations

MASK64 = 2 ** 64 - 1
LEVEL_STATS = ("hits", "misses", "load_lines", "store_lines", "through_bytes", "evicts", "invalidations")


class _Level:
    def __init__(self, spec):
        self.spec = spec
        self.sets = [[] for _ in range(spec.sets)]  # each: list of [line, dirty], front first
        self.rng = spec.seed
        self.stats = dict.fromkeys(LEVEL_STATS, 0)

    def set_of(self, line):
        return self.sets[line % self.spec.sets]

    def find(self, line):
        s = self.set_of(line)
        for p, entry in enumerate(s):
            if entry[0] == line:
                return s, p
        return s, None

    def rng_next(self):
        x = self.rng
        x ^= (x << 13) & MASK64
        x ^= x >> 7
        x ^= (x << 17) & MASK64
        self.rng = x
        return x

    def touch(self, s, p):
        # "touch moves an entry to the front for LRU and does nothing for FIFO and RANDOM"
        if self.spec.policy == "LRU":
            s.insert(0, s.pop(p))


class ReferenceHierarchy:
    """Same API as loopmodel.cachesim.hierarchy.Hierarchy."""

    def __init__(self, levels):
        self.lv = [_Level(s) for s in levels]
        self.n = len(levels)
        self.line_size = levels[0].line_size
        self.counting = True
        self.mem = {"loads": 0, "stores": 0, "store_bytes": 0}

    def _count(self, stats, key, by=1):
        if self.counting:
            stats[key] += by

    # --- the spec, step by step ------------------------------------------------------------
    def load(self, i, line):
        if i == self.n:
            self._count(self.mem, "loads")
            return
        c = self.lv[i]
        s, p = c.find(line)
        if p is not None:
            self._count(c.stats, "hits")
            c.touch(s, p)
            return
        self._count(c.stats, "misses")
        d = self.fetch(i, line)
        self.place(i, line, d)

    def fetch(self, i, line):
        self._count(self.lv[i].stats, "load_lines")
        j = i + 1
        if j == self.n:
            self._count(self.mem, "loads")
            return False
        c = self.lv[j]
        if c.spec.kind == "victim":
            s, p = c.find(line)
            if p is not None:
                self._count(c.stats, "hits")
                dirty = s[p][1]
                s.pop(p)  # exclusive: the line moves up
                return dirty
            self._count(c.stats, "misses")
            return self.fetch(j, line)
        self.load(j, line)
        return False

    def place(self, i, line, dirty):
        c = self.lv[i]
        s = c.set_of(line)
        if len(s) == c.spec.ways:
            v = c.rng_next() % c.spec.ways if c.spec.policy == "RANDOM" else c.spec.ways - 1
            vline, vdirty = s.pop(v)
            self.evict(i, vline, vdirty)
        else:
            v = len(s)
        if c.spec.policy == "RANDOM":
            s.insert(min(v, len(s)), [line, dirty])
        else:
            s.insert(0, [line, dirty])

    def evict(self, i, v, d):
        c = self.lv[i]
        self._count(c.stats, "evicts")
        if c.spec.kind == "inclusive" and i > 0:
            for u in range(i):
                su, p = self.lv[u].find(v)
                if p is not None:
                    d = d or su[p][1]
                    su.pop(p)
                    self._count(self.lv[u].stats, "invalidations")
        j = i + 1
        if d:
            self._count(c.stats, "store_lines")
            self.write_back(j, v)
        elif j < self.n and self.lv[j].spec.kind == "victim":
            if self.lv[j].spec.victim_clean:  # victim_clean false: placed, but no transfer counted
                self._count(c.stats, "store_lines")
            self.victim_insert(j, v, False)

    def write_back(self, j, line):
        if j == self.n:
            self._count(self.mem, "stores")
            return
        c = self.lv[j]
        if c.spec.kind == "victim":
            self.victim_insert(j, line, True)
            return
        s, p = c.find(line)
        if not c.spec.write_back:
            if p is not None:
                c.touch(s, p)
            else:
                self.place(j, line, False)
            self._count(c.stats, "store_lines")
            self.write_back(j + 1, line)
            return
        if p is not None:
            s[p][1] = True
            c.touch(s, p)
        else:
            self.place(j, line, True)

    def victim_insert(self, j, line, d):
        c = self.lv[j]
        s, p = c.find(line)
        if p is not None:
            s[p][1] = s[p][1] or d
            c.touch(s, p)
            return
        self.place(j, line, d)

    def store(self, i, line, b):
        if i == self.n:
            self._count(self.mem, "store_bytes", b)
            return
        c = self.lv[i]
        s, p = c.find(line)
        allocated = True
        if p is not None:
            self._count(c.stats, "hits")
            entry = s[p]
            c.touch(s, p)
            if c.spec.write_back:
                entry[1] = True
        else:
            self._count(c.stats, "misses")
            if c.spec.write_allocate and c.spec.kind != "victim":
                d = self.fetch(i, line)
                self.place(i, line, d or c.spec.write_back)
            else:
                allocated = False
        if not c.spec.write_back or not allocated:
            self._count(c.stats, "through_bytes", b)
            self.store(i + 1, line, b)

    def nt_store(self, line, b):
        for c in self.lv:
            s, p = c.find(line)
            if p is not None:
                s.pop(p)
                self._count(c.stats, "invalidations")
        self._count(self.lv[-1].stats, "through_bytes", b)
        self._count(self.mem, "store_bytes", b)

    # --- API ------------------------------------------------------------------------------
    def access(self, addr, size, kind):
        ls = self.line_size
        end = addr + size
        line = addr // ls
        while size > 0 and line * ls < end:
            b = min(end, (line + 1) * ls) - max(addr, line * ls)
            if kind == "load":
                self.load(0, line)
            elif kind == "store":
                self.store(0, line, b)
            else:
                self.nt_store(line, b)
            line += 1

    def flush(self):
        # "for i = 0 .. n-1, for each set of L[i] in order, while the set is not empty: remove its
        # front entry v (dirty bit d) and evict(i, v, d)"
        for i, c in enumerate(self.lv):
            for s in c.sets:
                while s:
                    v, d = s.pop(0)
                    self.evict(i, v, d)

    def stats(self):
        out = {c.spec.name: dict(c.stats) for c in self.lv}
        out["MEM"] = dict(self.mem)
        return out

    def reset_stats(self):
        for c in self.lv:
            c.stats = dict.fromkeys(LEVEL_STATS, 0)
        self.mem = dict.fromkeys(self.mem, 0)

    def contents(self, i):
        return [[(ln, bool(d)) for ln, d in s] for s in self.lv[i].sets]
