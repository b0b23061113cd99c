"""The operations of a loop-carried dependency as a directed acyclic graph (pure data).

A loop-carried dependency (a recurrence, cross-architecture-machine-models.txt §3.4.1:
"loop-carried dependencies ... the critical path") runs from the dependent read (``s`` in
``s += a[i]``, ``a[i-1]`` in ``a[i] = a[i-1]*c + 1``) through the operations that use it, up
to the write. Temporaries used more than once (``t2 = t1*t1 + t1``) make the paths share
operations, so their number grows exponentially with the temporaries while the graph stays
linear; what the in-core model needs -- the operation sequence with the longest latency and
the operations on any path -- is a longest-path recursion over the graph, linear in its size.

FMA contraction follows the compilers (``a*b + c`` becomes one FMA by default): on a path, a
multiplication immediately followed by an addition is one FMA, pairing from the dependent
read on, so ``MUL -> ADD -> MUL`` is ``FMA -> MUL``, the Gauss-Seidel critical path of
cross-architecture-machine-models.txt Fig. 4, and ``MUL -> ADD -> ADD`` is ``FMA -> ADD``.
"""
from __future__ import annotations

from dataclasses import dataclass



#: index of the dependent read in :attr:`DependencyGraph.nodes`
SOURCE = 0


@dataclass(frozen=True)
class DependencyGraph:
    """Operations between the dependent read and the write of a loop-carried dependency.

    Attributes:
        nodes: ``(op, children)`` per node in topological order (every child index is smaller
            than its parent's); node 0 (:data:`SOURCE`) is the dependent read, with op ``""``
            and no children; every other node is an operation (``ADD``, ``MUL``, ``DIV``...)
            on at least one path from the dependent read to the write.
        root: index of the node producing the written value (0 when the read is written back
            unchanged).
    """

    nodes: tuple
    root: int

    def longest_chain(self, latency: dict | None = None, contract_fma: bool = False) -> tuple:
        """The path from the dependent read to the write with the largest total latency.

        Args:
            latency: op -> latency in cy (None: 1 per operation, the longest chain by count).
                Must hold every op of :meth:`operations` (``FMA`` instead of contracted pairs).
            contract_fma: pair ``MUL -> ADD`` into one ``FMA`` (module docstring).

        Returns:
            ``(total latency in cy, ops)``, ``ops`` the operation sequence from the read to the
            write (after contraction); ``(0, ())`` when the read is written back unchanged.
            Ties go to the lexicographically largest sequence (deterministic).

        Raises:
            KeyError: an operation on a path has no entry in ``latency``.
        """
        def w(op):
            return 1.0 if latency is None else latency[op]

        # per node, state -> best (committed cost, ops); state True: the chain ends in a MUL
        # whose fate (MUL, or FMA with a following ADD) is still open, its latency not yet added
        best = [{False: (0.0, ())}]
        for op, kids in self.nodes[1:]:
            cur: dict = {}
            for c in kids:
                for pending, (cost, ops) in best[c].items():
                    for state, cand in _step(op, pending, cost, ops, w, contract_fma):
                        if state not in cur or cand > cur[state]:
                            cur[state] = cand
            best.append(cur)
        finals = [(cost + (w("MUL") if pending else 0.0), ops) for pending, (cost, ops) in best[self.root].items()]
        return max(finals)

    def operations(self, contract_fma: bool = False) -> tuple:
        """The operation types on any path (after contraction), in order of first appearance
        in :attr:`nodes`: ``FMA`` for a MUL with an ADD after it on some path, ``MUL`` for one
        without, ``ADD`` for an addition not fed directly by a MUL."""
        parents: dict = {}
        for i, (op, kids) in enumerate(self.nodes):
            for c in kids:
                parents.setdefault(c, set()).add(op)
        out = []
        for i, (op, kids) in enumerate(self.nodes[1:], 1):
            if not contract_fma:
                out.append(op)
            elif op == "MUL":
                after = parents.get(i, set())
                out += (["FMA"] if "ADD" in after else []) + (["MUL"] if i == self.root or after - {"ADD"} else [])
            elif op == "ADD":
                out += ["ADD"] if any(c == SOURCE or self.nodes[c][0] != "MUL" for c in kids) else []
            else:
                out.append(op)
        return tuple(dict.fromkeys(out))

    def single_operation(self) -> str | None:
        """The op when every path is that one operation alone (``s += a[i]``: ADD), else None."""
        if len(self.nodes) == 2 and self.root == 1:
            return self.nodes[1][0]
        return None


def _step(op: str, pending: bool, cost: float, ops: tuple, w, contract_fma: bool) -> list:
    """Successor states ``[(pending, (cost, ops))]`` of a chain extended by ``op``; latencies are
    added in path order, so the totals equal a plain sum over the contracted sequence."""
    if pending and contract_fma and op == "ADD":
        return [(False, (cost + w("FMA"), ops[:-1] + ("FMA",)))]
    if pending:
        cost += w("MUL")
    if op == "MUL":
        return [(True, (cost, ops + ("MUL",)))]
    return [(False, (cost + w(op), ops + (op,)))]
