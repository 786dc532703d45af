"""Opcode handlers: f-strings (tracer.frontend.callouts says what becomes of them)."""
from __future__ import annotations

from tracer.frontend.callouts import build_string, format_value


class StringOps:
    def op_FORMAT_VALUE(self, instr):          # 3.11, 3.12: flags = conversion | 4 if a spec
        spec = self.pop() if instr.arg & 0x04 else ""
        self.push(format_value(self.tracer, self.pop(), instr.arg & 0x03, spec))

    def op_CONVERT_VALUE(self, instr):         # 3.13: !s, !r, !a before FORMAT_SIMPLE/WITH_SPEC
        self.push(format_value(self.tracer, self.pop(), int(instr.arg), ""))

    def op_FORMAT_SIMPLE(self, instr):
        self.push(format_value(self.tracer, self.pop(), 0, ""))

    def op_FORMAT_WITH_SPEC(self, instr):
        spec = self.pop()
        self.push(format_value(self.tracer, self.pop(), 0, spec))

    def op_BUILD_STRING(self, instr):
        self.push(build_string(self.tracer, self.popn(instr.arg)))
