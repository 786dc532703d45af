"""The control-flow graph of a code object's bytecode, and what the interpreter asks of it.

The symbolic interpreter runs bytecode one instruction at a time; when a branch depends on a
traced value it must run both sides and know where they meet again. That is a question about the
bytecode's graph, answered here once per code object:

- `join_point(pc)`: where the two sides of a branch at `pc` meet: the first instruction of the
  branch block's immediate post-dominator (None: they meet only at the function's exit);
  `common_join(pcs)` the same for paths from several places (a loop's exits);
- `loop_of(pc)`: the innermost natural loop holding `pc` (header, body blocks, exits);
- `loops_left(pc, targets)`: the loops a conditional jump at `pc` decides to leave;
- `live_locals(pc)`: the local variables some path from `pc` reads before writing (a dead local
  need not be merged at a join, nor carried around a loop).

Blocks start at jump targets and after jumps and returns; positions (`pc`) are indexes into the
`bytecode` package's instruction list, where labels and pseudo-instructions also take a slot.
Exception-handler edges are not followed (try/except is not compiled).
"""
from __future__ import annotations

import sys
from dataclasses import dataclass, field

from bytecode import Instr, Label

PY313 = sys.version_info >= (3, 13)

UNCONDITIONAL = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP", "JUMP_NO_INTERRUPT"}
FINAL = {"RETURN_VALUE", "RETURN_CONST", "RAISE_VARARGS", "RERAISE"}
READS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "DELETE_FAST", "LOAD_FAST_LOAD_FAST",
         "STORE_FAST_LOAD_FAST"}
WRITES = {"STORE_FAST", "STORE_FAST_STORE_FAST", "STORE_FAST_LOAD_FAST"}


def _names(instr: Instr, op_names: set) -> list[str]:
    if instr.name not in op_names:
        return []
    arg = instr.arg
    if instr.name == "STORE_FAST_LOAD_FAST":     # (stored, loaded)
        return [arg[0]] if op_names is WRITES else [arg[1]]
    items = arg if isinstance(arg, tuple) else (arg,)
    return [getattr(a, "name", a) for a in items]


@dataclass
class BasicBlock:
    index: int
    start: int                      # pc of its first instruction
    end: int                        # pc after its last item
    successors: list[int] = field(default_factory=list)
    reads: set = field(default_factory=set)       # locals read before any write in the block
    writes: set = field(default_factory=set)


@dataclass
class Loop:
    header: int                     # block index
    blocks: frozenset               # block indexes of the natural loop (the header included)
    header_pc: int


class FlowGraph:
    def __init__(self, instrs: list, labels: dict):
        self.instrs = instrs
        self.labels = labels
        starts = {0}
        for pc, item in enumerate(instrs):
            if isinstance(item, Label):
                starts.add(pc)
            elif isinstance(item, Instr) and (item.has_jump() or item.name in FINAL):
                starts.add(pc + 1)
                if item.name == "FOR_ITER":
                    starts.add(self.for_iter_exit(labels[item.arg]))
        starts = sorted(s for s in starts if s < len(instrs))
        self.blocks: list[BasicBlock] = []
        self.block_at: dict[int, int] = {}          # pc of any item -> block index
        for i, start in enumerate(starts):
            end = starts[i + 1] if i + 1 < len(starts) else len(instrs)
            first = next((pc for pc in range(start, end) if isinstance(instrs[pc], Instr)), start)
            self.blocks.append(BasicBlock(i, first, end))
            for pc in range(start, end):
                self.block_at[pc] = i
        for block in self.blocks:
            last = None
            for pc in range(block.start, block.end):
                item = instrs[pc]
                if isinstance(item, Instr):
                    last = item
                    for n in _names(item, READS):
                        if n not in block.writes:
                            block.reads.add(n)
                    block.writes.update(_names(item, WRITES))
            falls_through = last is None or not (last.name in FINAL or last.name in UNCONDITIONAL)
            if last is not None and last.has_jump():
                target = labels[last.arg]
                if last.name == "FOR_ITER":
                    target = self.for_iter_exit(target)
                block.successors.append(self.block_at[target])
            if falls_through and block.end < len(instrs):
                block.successors.append(self.block_at[block.end])
        self._thread_empty_blocks()
        self._left: dict = {}                       # loops_left's answers
        self._postdominators()
        self._loops()
        self._liveness()

    def for_iter_exit(self, target: int) -> int:
        """Where an exhausted FOR_ITER whose label is at `target` goes on: CPython pops the
        iterator and skips the loop's END_FOR (3.12), and the POP_TOP after it (3.13); on
        3.11 the label is already past the loop."""
        pc = target
        for name in ("END_FOR", "POP_TOP") if PY313 else ("END_FOR",):
            at = pc
            while at < len(self.instrs) and not isinstance(self.instrs[at], Instr):
                at += 1
            if at < len(self.instrs) and self.instrs[at].name == name:
                pc = at + 1
            else:
                break
        return pc

    def _thread_empty_blocks(self):
        """An edge into a block of no-ops that just falls through (the NOP of 3.11's
        `while True:`, which `continue` jumps to while the loop's end jumps past it) goes to the
        block after it instead, so each loop has one header."""
        def empty(b: BasicBlock) -> bool:
            items = [self.instrs[pc] for pc in range(b.start, b.end) if isinstance(self.instrs[pc], Instr)]
            return all(i.name == "NOP" for i in items) and len(b.successors) == 1
        forward = {b.index: b.successors[0] for b in self.blocks if b.index and empty(b)}
        def target(i: int) -> int:
            seen = set()
            while i in forward and i not in seen:
                seen.add(i)
                i = forward[i]
            return i
        for b in self.blocks:
            b.successors = [target(s) for s in b.successors]

    # ------------------------------------------------------------------ post-dominators
    def _postdominators(self):
        n = len(self.blocks)
        exit_ = n                                   # a virtual exit after every final block
        succ = [b.successors or [exit_] for b in self.blocks]
        everything = set(range(n + 1))
        pdom = [set(everything) for _ in range(n)] + [{exit_}]
        changed = True
        while changed:
            changed = False
            for i in reversed(range(n)):
                new = {i} | set.intersection(*(pdom[s] for s in succ[i]))
                if new != pdom[i]:
                    pdom[i], changed = new, True
        self.pdom = pdom
        self.ipdom: list[int | None] = []
        for i in range(n):
            strict = pdom[i] - {i}
            # the immediate one is the strict post-dominator that all the others post-dominate
            best = next((d for d in strict if all(o in pdom[d] for o in strict)), exit_)
            self.ipdom.append(None if best == exit_ else best)

    def join_point(self, pc: int) -> int | None:
        j = self.ipdom[self.block_at[pc]]
        return None if j is None else self.blocks[j].start

    def common_join(self, pcs) -> int | None:
        """Where every path from each of `pcs` goes through first: the first pc of the nearest
        block that post-dominates all their blocks (None: only the function's exit)."""
        common = set.intersection(*(self.pdom[self.block_at[pc]] for pc in pcs)) - {len(self.blocks)}
        best = next((d for d in common if all(o in self.pdom[d] for o in common)), None)
        return None if best is None else self.blocks[best].start

    # ------------------------------------------------------------------ natural loops
    def _loops(self):
        n = len(self.blocks)
        reachable, stack = set(), [0]
        while stack:
            i = stack.pop()
            if i not in reachable:
                reachable.add(i)
                stack.extend(self.blocks[i].successors)
        preds = [[] for _ in range(n)]
        for b in self.blocks:
            if b.index in reachable:              # a block nothing reaches dominates nothing
                for s in b.successors:
                    preds[s].append(b.index)
        dom = [set(range(n)) for _ in range(n)]
        dom[0] = {0}
        changed = True
        while changed:
            changed = False
            for i in range(1, n):
                ps = [dom[p] for p in preds[i]]
                new = {i} | (set.intersection(*ps) if ps else set())
                if new != dom[i]:
                    dom[i], changed = new, True
        bodies: dict[int, set] = {}
        for b in self.blocks:
            for h in b.successors:
                if h in dom[b.index]:               # a back edge b -> h
                    body = bodies.setdefault(h, {h})
                    stack = [b.index]
                    while stack:
                        x = stack.pop()
                        if x not in body:
                            body.add(x)
                            stack.extend(preds[x])
        self.loops = [Loop(h, frozenset(body), self.blocks[h].start) for h, body in bodies.items()]
        self.header_pcs = {loop.header_pc: loop for loop in self.loops}

    def loop_of(self, pc: int) -> Loop | None:
        """The innermost loop holding `pc`."""
        b = self.block_at[pc]
        inside = [loop for loop in self.loops if b in loop.blocks]
        return min(inside, key=lambda loop: len(loop.blocks)) if inside else None

    def leaves_loop(self, loop: Loop, target_pc: int) -> bool:
        return self.block_at[target_pc] not in loop.blocks

    def loops_left(self, pc: int, targets) -> list[Loop]:
        """The loops holding `pc` (outermost first) that a conditional jump there decides to
        leave: one side can leave the loop in this iteration (reach a block outside it without
        passing its header), and the two sides do not meet again in this iteration. The second
        part matters for short-circuit conditions: in `if k > n or x: break` the jump on
        `k > n` goes to the test of `x`, inside the loop, yet only one side of that test stays
        in the loop; and in `while True: ... if (p or k >= m) and q: break` the sides of the jump
        on `k >= m` meet at the test of `q` only in the next iteration."""
        key = (pc, tuple(targets))
        if key not in self._left:
            join = self.join_point(pc)
            join_block = None if join is None else self.block_at[join]
            left = []
            for loop in self.loops:
                if self.block_at[pc] not in loop.blocks:
                    continue
                reached = [self._in_iteration(loop, self.block_at[t]) for t in targets]
                if not any(b not in loop.blocks for r in reached for b in r):
                    continue                      # no side leaves it now
                if join_block in loop.blocks and all(join_block in r for r in reached):
                    continue                      # the sides meet before anything leaves it
                left.append(loop)
            self._left[key] = sorted(left, key=lambda loop: -len(loop.blocks))
        return self._left[key]

    def _in_iteration(self, loop: Loop, start: int) -> set:
        """The blocks reachable from block `start` without passing the loop's header (the
        blocks outside the loop it reaches included, but not what follows them)."""
        seen, stack = set(), [start]
        while stack:
            b = stack.pop()
            if b not in seen:
                seen.add(b)
                if b in loop.blocks and b != loop.header:
                    stack.extend(s for s in self.blocks[b].successors if s != loop.header)
        return seen

    def exit_pcs(self, loop: Loop) -> set[int]:
        """The first pcs of the blocks a loop's blocks jump to outside it, except blocks that
        only return or raise: those are the end of the path, run as part of it (they pop the
        stack entries of inner loops, which may differ between the paths that get there). Where
        a `for` loop's exhausted iterator goes is always an exit, and so is where a while loop's
        test sends it when it fails (the jumps there all come from the test, which also jumps
        back to the header): the code after the loop runs after the loop op (so an array it
        makes need not leave the loop's body)."""
        exits = {self.blocks[s].start for b in loop.blocks for s in self.blocks[b].successors
                 if s not in loop.blocks and self.blocks[s].successors}
        header = self.instrs[loop.header_pc]
        if header.name == "FOR_ITER":             # where the exhausted iterator goes (its stack is the loop's)
            exits.add(self.blocks[self.block_at[self.for_iter_exit(self.labels[header.arg])]].start)
        else:                                     # a while loop's own test failing (its stack: the loop's)
            leaving = [(b, s) for b in loop.blocks for s in self.blocks[b].successors if s not in loop.blocks]
            exits |= {self.blocks[s].start for _, s in leaving
                      if all(self._tests_again(loop, b) for b, t in leaving if t == s)}
        return exits

    def _tests_again(self, loop: Loop, b: int) -> bool:
        """Whether block `b` ends with the loop's test: a jump whose other way is the header (or
        a block that only jumps back there, as 3.12 compiles a while loop)."""
        def back(s: int) -> bool:
            block = self.blocks[s]
            items = [x for x in self.instrs[block.start:block.end] if isinstance(x, Instr)]
            return s == loop.header or (len(items) == 1 and items[0].name in UNCONDITIONAL
                                        and block.successors == [loop.header])
        return any(back(s) for s in self.blocks[b].successors)

    # ------------------------------------------------------------------ liveness
    def _liveness(self):
        live_in = [set() for _ in self.blocks]
        changed = True
        while changed:
            changed = False
            for b in reversed(self.blocks):
                out = set().union(*(live_in[s] for s in b.successors)) if b.successors else set()
                new = b.reads | (out - b.writes)
                if new != live_in[b.index]:
                    live_in[b.index], changed = new, True
        self.live_in = live_in

    def live_locals(self, pc: int) -> set[str]:
        """Locals that may be read from `pc` on (pc must start a block)."""
        b = self.blocks[self.block_at[pc]]
        if pc == b.start:
            return self.live_in[b.index]
        # mid-block: redo the block's tail
        live = set().union(*(self.live_in[s] for s in b.successors)) if b.successors else set()
        for i in reversed(range(pc, b.end)):
            item = self.instrs[i]
            if isinstance(item, Instr):
                live -= set(_names(item, WRITES))
                live |= set(_names(item, READS))
        return live


_GRAPHS: dict = {}


def flow_graph(code, instrs: list, labels: dict) -> FlowGraph:
    graph = _GRAPHS.get(code)
    if graph is None:
        graph = _GRAPHS[code] = FlowGraph(instrs, labels)
    return graph
