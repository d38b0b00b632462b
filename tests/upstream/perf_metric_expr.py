"""perf's metric expressions (tools/perf/util/expr.y), evaluated here to compare the catalog with them.

The grammar, as perf's: `a if cond else b` (lowest, right-associative), comparisons `<` `>`, `+ -`,
`* / %`, unary `-`, parentheses, numbers (59.5, 1e9), the functions min, max and d_ratio, literals
(#SMT_on, #core_wide, #has_pmem, #num_cores, #slots ...) and names: another metric of the same table,
`duration_time`, or an event - perf's event name, a kernel alias (topdown\\-be\\-bound) or a term with
modifiers (cpu@L1D_PEND_MISS.FB_FULL\\,cmask\\=1@, armv8_pmuv3_0@event\\=0x7005@).

Division by zero gives NaN, as perf's evaluator; d_ratio gives 0 when the divisor is 0.
"""
import math
import re

_TOKEN = re.compile(r"""
    (?P<space>\s+)
  | (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<literal>\#[A-Za-z_][A-Za-z0-9_]*)
  | (?P<name>(?:[A-Za-z_]|\\.)(?:[A-Za-z0-9_.:]|\\.|@[^@]*@)*)
  | (?P<op>[-+*/%(),<>])
""", re.X)


def tokenize(text):
    pos, out = 0, []
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m:
            raise ValueError("perf expression %r: cannot read at %d: %r" % (text, pos, text[pos:pos + 10]))
        pos = m.end()
        kind = m.lastgroup
        if kind == "space":
            continue
        val = m.group(kind)
        if kind == "name":
            val = re.sub(r"\\(.)", r"\1", val)   # perf's escapes: topdown\-be\-bound, \, and \=
        out.append((kind, val))
    out.append(("end", None))
    return out


class Parser:
    """Parses into nested tuples: ('num', v), ('name', s), ('literal', s), (op, a, b), ('neg', a),
    ('if', value, cond, other), ('call', fn, [args])."""

    def __init__(self, text):
        self.toks, self.i, self.text = tokenize(text), 0, text

    def peek(self):
        return self.toks[self.i]

    def take(self, want=None):
        tok = self.toks[self.i]
        if want is not None and tok[1] != want:
            raise ValueError("perf expression %r: expected %r, found %r" % (self.text, want, tok[1]))
        self.i += 1
        return tok

    def parse(self):
        tree = self.choice()
        if self.peek()[0] != "end":
            raise ValueError("perf expression %r: unexpected %r" % (self.text, self.peek()[1]))
        return tree

    def choice(self):
        value = self.compare()
        if self.peek() == ("name", "if"):
            self.take()
            cond = self.compare()
            if self.peek() != ("name", "else"):
                raise ValueError("perf expression %r: 'if' without 'else'" % self.text)
            self.take()
            return ("if", value, cond, self.choice())
        return value

    def compare(self):
        left = self.sum()
        while self.peek() in (("op", "<"), ("op", ">")):
            op = self.take()[1]
            left = (op, left, self.sum())
        return left

    def sum(self):
        left = self.product()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.take()[1]
            left = (op, left, self.product())
        return left

    def product(self):
        left = self.unary()
        while self.peek() in (("op", "*"), ("op", "/"), ("op", "%")):
            op = self.take()[1]
            left = (op, left, self.unary())
        return left

    def unary(self):
        if self.peek() == ("op", "-"):
            self.take()
            return ("neg", self.unary())
        return self.primary()

    def primary(self):
        kind, val = self.take()
        if kind == "num":
            return ("num", float(val))
        if kind == "literal":
            return ("literal", val)
        if kind == "op" and val == "(":
            inner = self.choice()
            self.take(")")
            return inner
        if kind == "name" and self.peek() == ("op", "(") and val in ("min", "max", "d_ratio"):
            self.take("(")
            args = [self.choice()]
            while self.peek() == ("op", ","):
                self.take()
                args.append(self.choice())
            self.take(")")
            return ("call", val, args)
        if kind == "name":
            return ("name", val)
        raise ValueError("perf expression %r: unexpected %r" % (self.text, val))


def parse(text):
    return Parser(text).parse()


def names(tree, out=None):
    """Every name (events, metrics, duration_time) a tree refers to."""
    out = [] if out is None else out
    if tree[0] == "name":
        out.append(tree[1])
    elif tree[0] in ("num", "literal"):
        pass
    elif tree[0] == "call":
        for a in tree[2]:
            names(a, out)
    else:
        for sub in tree[1:]:
            names(sub, out)
    return out


def evaluate(tree, lookup, literals):
    """Value of a tree; lookup(name) gives an event's count, a metric's value or duration_time."""
    op = tree[0]
    if op == "num":
        return tree[1]
    if op == "literal":
        if tree[1] not in literals:
            raise KeyError("perf literal %s has no value here" % tree[1])
        return float(literals[tree[1]])
    if op == "name":
        return float(lookup(tree[1]))
    if op == "neg":
        return -evaluate(tree[1], lookup, literals)
    if op == "if":
        cond = evaluate(tree[2], lookup, literals)
        return evaluate(tree[1] if cond != 0 and not math.isnan(cond) else tree[3], lookup, literals)
    if op == "call":
        args = [evaluate(a, lookup, literals) for a in tree[2]]
        if tree[1] == "d_ratio":
            return 0.0 if args[1] == 0 else args[0] / args[1]
        if any(math.isnan(a) for a in args):
            return math.nan
        return min(args) if tree[1] == "min" else max(args)
    a, b = evaluate(tree[1], lookup, literals), evaluate(tree[2], lookup, literals)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return math.nan if b == 0 else a / b
    if op == "%":
        return math.nan if b == 0 else math.fmod(a, b)
    if op == "<":
        return 1.0 if a < b else 0.0
    if op == ">":
        return 1.0 if a > b else 0.0
    raise ValueError("unknown operator %r" % (op,))


def event_term(name):
    """An event term with modifiers -> (pmu or None, base event name or None, {field: value}):
    'cpu@OFFCORE_REQUESTS_OUTSTANDING.ALL_DATA_RD,cmask=4@' -> ('cpu', 'OFFCORE_...', {'cmask': 4});
    'armv8_pmuv3_0@event=0x7005@' -> ('armv8_pmuv3_0', None, {'event': 0x7005})."""
    m = re.fullmatch(r"([A-Za-z0-9_]+)@([^@]*)@", name)
    if not m:
        return None, name, {}
    pmu, body = m.group(1), m.group(2)
    base, fields = None, {}
    for part in body.split(","):
        if "=" in part:
            k, v = part.split("=", 1)
            fields[k.strip()] = int(v.strip(), 0)
        elif part.strip():
            base = part.strip()
    return pmu, base, fields
