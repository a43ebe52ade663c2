#!/usr/bin/env python3
"""Reference re-encoder for the line-table sections ptxas 13.0.88 writes into a cubin.

    reencode.py FILE.ptx FILE.cubin [--cwd DIR] [-v]
    reencode.py --batch LIST            (LIST: lines "ptx cubin [cwd]")

Rebuilds .nv_debug_ptx_txt, .nv_debug_line_sass, .debug_line (and their .rel/.rela entries),
and checks .debug_str, from
  * the PTX text,
  * the cubin's ELF header (SM), .text sections and function symbols (addresses, sizes),
  * the PTX line of each SASS instruction, as `nvdisasm -gp` prints it,
then compares byte for byte with what ptxas wrote.  --cwd: the directory ptxas ran in (relative
.file names are stat()ed there).  See SPEC.md for the rules implemented here.
"""
import os, re, struct, subprocess, sys, zlib

NVDISASM = os.environ.get('NVDISASM', '/root/.cache/kiln-oracle/13.0.88/bin/nvdisasm')
# heuristic: a BSSY that opens a function (seen in -G code) carries no PTX line in ptxas
UNLOCATED_ENTRY_BSSY = True

# =============================================================================================
# LEB128
def uleb(v):
    out = bytearray()
    while True:
        b = v & 0x7f; v >>= 7
        if v: out.append(b | 0x80)
        else: out.append(b); return bytes(out)


def sleb(v):
    out = bytearray()
    while True:
        b = v & 0x7f; v >>= 7
        if (v == 0 and not b & 0x40) or (v == -1 and b & 0x40):
            out.append(b); return bytes(out)
        out.append(b | 0x80)


def read_uleb(b, i):
    r = s = 0
    while True:
        c = b[i]; i += 1; r |= (c & 0x7f) << s; s += 7
        if not c & 0x80: return r, i


def read_sleb(b, i):
    r = s = 0
    while True:
        c = b[i]; i += 1; r |= (c & 0x7f) << s; s += 7
        if not c & 0x80:
            return (r - (1 << s) if c & 0x40 else r), i

# =============================================================================================
# ELF (64-bit little endian cubin)
class Elf:
    def __init__(self, path):
        d = self.d = open(path, 'rb').read()
        shoff, = struct.unpack_from('<Q', d, 0x28)
        self.e_flags, = struct.unpack_from('<I', d, 0x30)
        self.e_type, = struct.unpack_from('<H', d, 0x10)      # 1 = ET_REL (ptxas -c), 2 = ET_EXEC
        shentsize, shnum, shstrndx = struct.unpack_from('<HHH', d, 0x3a)
        keys = ('name', 'type', 'flags', 'addr', 'off', 'size', 'link', 'info', 'align', 'entsize')
        self.secs = [dict(zip(keys, struct.unpack_from('<IIQQQQIIQQ', d, shoff + i * shentsize)))
                     for i in range(shnum)]
        so = self.secs[shstrndx]['off']
        for s in self.secs:
            s['nm'] = self._str(so, s['name'])
        self.byname = {s['nm']: i for i, s in enumerate(self.secs)}
        self.syms = []
        if '.symtab' in self.byname:
            st = self.secs[self.byname['.symtab']]
            stro = self.secs[st['link']]['off']
            for k in range(st['size'] // 24):
                name, info, other, shndx, value, size = struct.unpack_from('<IBBHQQ', d, st['off'] + 24 * k)
                self.syms.append(dict(name=self._str(stro, name), info=info, shndx=shndx, value=value, size=size))

    @property
    def sm(self):
        return (self.e_flags >> 8) & 0xff          # e.g. 0x5a -> sm_90

    def _str(self, base, off):
        return self.d[base + off:self.d.index(b'\0', base + off)].decode('latin1')

    def data(self, name):
        if name not in self.byname: return None
        s = self.secs[self.byname[name]]
        return self.d[s['off']:s['off'] + s['size']]

    def relocs(self, target):
        """{'.rela': [...], '.rel': [...]}: (offset, sym, type, addend|None) for section `target`."""
        res = {}
        for pre, ent in (('.rela', 24), ('.rel', 16)):
            b = self.data(pre + target)
            if b is None: continue
            out = []
            for k in range(len(b) // ent):
                off, info = struct.unpack_from('<QQ', b, k * ent)
                add = struct.unpack_from('<q', b, k * ent + 16)[0] if ent == 24 else None
                out.append((off, info >> 32, info & 0xffffffff, add))
            res[pre] = out
        return res

# =============================================================================================
# 1. .nv_debug_ptx_txt
def ptx_lines(src):
    lines = src.split(b'\n')
    if lines and lines[-1] == b'':
        lines.pop()                        # text after the last \n only counts if non-empty
    return lines

BLANKED = re.compile(rb'\.(loc|file|b8|b16|b32|b64)\b')


def ptx_txt(src):
    out = []
    for l in ptx_lines(src):
        l = l.split(b'\r', 1)[0]           # a line's text ends at its first CR
        l = l.lstrip(b' \t')               # leading blanks and tabs go, everything else stays
        if l.startswith(b'//') or BLANKED.match(l):
            l = b''                        # whole-line comments; .loc/.file/.b8../.b64 lines
        out.append(l)
    while out and out[-1] == b'':          # trailing empty lines are dropped
        out.pop()
    return b''.join(x + b'\0' for x in out)

# =============================================================================================
# 2. PTX: functions, .file table, .loc directives, .debug_str
LOC_RE = re.compile(rb'^\s*\.loc\s+(\d+)\s+(\d+)\s+(\d+)\s*(?:,\s*function_name\s+([$\w.]+)(?:\s*\+\s*(\d+))?'
                    rb'\s*,\s*inlined_at\s+(\d+)\s+(\d+)\s+(\d+))?')
FILE_RE = re.compile(rb'^\s*\.file\s+(\d+)\s+"([^"]*)"(?:\s*,\s*(\w+)\s*,\s*(\w+))?')
FUNC_RE = re.compile(rb'\.(entry|func)\b')


def strip_comment(l):
    return re.sub(rb'/\*.*?\*/', b' ', l).split(b'//', 1)[0]


def func_name(hdr):
    h = hdr.split(b'{')[0]
    h = re.sub(rb'\.(visible|extern|weak|entry|func|noreturn)\b', b' ', h).strip()
    if h.startswith(b'('):                 # skip the return-parameter list
        d = 0
        for k, ch in enumerate(h):
            if ch == 0x28: d += 1
            elif ch == 0x29:
                d -= 1
                if d == 0: h = h[k + 1:]; break
    m = re.match(rb'\s*([$\w.]+)', h)
    return m.group(1).decode() if m else None


class Ptx:
    """directives: id (= line number) -> (loc (file, line, col), (function_name, offset)|None,
    parent directive id|None).  A chain is the tuple of frames (loc, fn, key) from the outermost
    call site to the innermost location; key (the call-site directive id) identifies the inline
    instance."""
    def __init__(self, src):
        self.lines = ptx_lines(src)
        self.files = {}              # .file index -> (name, timestamp|None, size|None)
        self.directives = {}
        self.last_by_loc = {}
        self.loc_of_line = {}        # PTX line -> chain | None
        self.func_open_line = {}     # function -> line of its body's '{'
        self.func_first_loc = {}     # function -> chain of its first .loc
        self.debug_str = {}          # .debug_str label -> offset
        self.debug_str_bytes = b''
        self.uses_inlined_at = False
        self._parse()

    def _parse(self):
        depth = 0; in_body = False; cur_func = None; hdr = None
        cur = None                   # governing .loc directive
        section = None; sec_off = 0
        for i, raw in enumerate(self.lines, 1):
            m = FILE_RE.match(raw)
            if m:
                self.files[int(m.group(1))] = (m.group(2), int(m.group(3), 0) if m.group(3) else None,
                                               int(m.group(4), 0) if m.group(4) else None)
                continue
            code = strip_comment(raw)
            if not in_body and depth == 0 and section is None:
                ms = re.match(rb'^\s*\.section\s+([.\w]+)', code)
                if ms: section = ms.group(1); sec_off = 0
            if section is not None:          # .section .debug_str { $L__info_stringN: .b8 ... }
                for lab in re.findall(rb'([$\w]+)\s*:', code):
                    if section == b'.debug_str': self.debug_str[lab.decode()] = sec_off
                mb = re.search(rb'\.b(8|16|32|64)\s+(.*)', code)
                if mb:
                    vals = [x.strip() for x in mb.group(2).split(b',') if x.strip()]
                    w = int(mb.group(1)) // 8
                    sec_off += len(vals) * w
                    if section == b'.debug_str':
                        for v in vals:
                            try: self.debug_str_bytes += (int(v, 0) & ((1 << 8 * w) - 1)).to_bytes(w, 'little')
                            except ValueError: self.debug_str_bytes += b'?' * w
                depth += code.count(b'{') - code.count(b'}')
                if depth == 0 and b'}' in code: section = None
                continue
            if not in_body:
                if depth == 0 and FUNC_RE.search(code): hdr = b''
                if hdr is not None:
                    hdr += code + b' '
                    if b'{' in code:
                        cur_func = func_name(hdr); hdr = None
                        self.func_open_line[cur_func] = i
                        in_body = True; cur = None
                        depth += code.count(b'{') - code.count(b'}')
                        self.loc_of_line[i] = None
                    elif b';' in code:
                        hdr = None           # prototype only
                continue
            m = LOC_RE.match(raw)
            if m:
                f, l, c = int(m.group(1)), int(m.group(2)), int(m.group(3))
                fn = parent = None
                if m.group(4) is not None:
                    self.uses_inlined_at = True
                    fn = (m.group(4).decode(), int(m.group(5) or 0))
                    at = (int(m.group(6)), int(m.group(7)), int(m.group(8)))
                    # the call site is the most recent .loc directive with exactly that location
                    parent = self.last_by_loc.get(at)
                    if parent is None:       # never seen: a synthetic top-level call site
                        parent = -i; self.directives[parent] = (at, None, None)
                self.directives[i] = ((f, l, c), fn, parent)
                self.last_by_loc[(f, l, c)] = i
                cur = i
                self.func_first_loc.setdefault(cur_func, self.chain(i))
                self.loc_of_line[i] = None
                continue
            ch = self.chain(cur) if cur is not None else None
            if ch and ch[-1][0][1] == 0:
                ch = None                    # '.loc f 0 c': no line -> no location
            self.loc_of_line[i] = ch
            depth += code.count(b'{') - code.count(b'}')
            if depth == 0:
                in_body = False; cur_func = None

    def chain(self, d):
        frames = []
        while d is not None:
            loc, fn, parent = self.directives[d]
            frames.append((loc, fn, parent)); d = parent
        return tuple(reversed(frames))


def expects_sections(src):
    m = re.search(rb'^\s*\.version\s+(\d+)\.(\d+)', src, re.M)
    if m and (int(m.group(1)), int(m.group(2))) < (4, 0):
        return False                         # PTX ISA < 4.0: .loc is ignored
    return re.search(rb'^\s*\.loc\s', src, re.M) is not None

# =============================================================================================
# 3. PTX line of each SASS instruction (nvdisasm -gp)
def sass_ptx_lines(cubin):
    out = subprocess.run([NVDISASM, '-gp', '-c', cubin], capture_output=True, text=True, check=True).stdout
    res = {}; sec = None; cur = None
    for l in out.split('\n'):
        m = re.match(r'\s*\.section\s+(\.text\.[^,]+),', l)
        if m:
            sec = m.group(1); res[sec] = []; cur = None; continue
        m = re.match(r'\s*//## File "\.nv_debug_ptx_txt[.0-9]*", line (\d+)', l)
        if m:
            cur = int(m.group(1)); continue
        m = re.match(r'\s*/\*([0-9a-f]{4,})\*/\s+(.*)', l)
        if m and sec:
            res[sec].append((int(m.group(1), 16), cur, m.group(2)))
    return res

# =============================================================================================
# 4. line-program writer
OPCODE_BASE, LINE_BASE, LINE_RANGE = 10, -5, 14
STD_LENGTHS = bytes([0, 1, 1, 1, 1, 0, 0, 0, 1])


class Prog:
    """One line program (all sequences of a section).  Rows are numbered from 1 per sequence."""
    def __init__(self):
        self.b = bytearray(); self.relocs = []; self.nrows = 0

    def start(self, sym, file, line, addr=0):
        self.b += b'\x00\x09\x02'                    # DW_LNE_set_address
        self.relocs.append((len(self.b), sym))       # R_CUDA_64 -> function symbol, addend 0
        self.b += struct.pack('<Q', addr)
        self.b += b'\x04' + uleb(file)               # DW_LNS_set_file (PTX .file index)
        self.b += b'\x03' + sleb(line - 1)           # DW_LNS_advance_line, even when 0
        self.b += b'\x01'                            # DW_LNS_copy
        self.addr, self.file, self.line, self.ctx = addr, file, line, (0, 0)
        self.nrows = 1
        return 1

    def set_file(self, f):
        self.b += b'\x04' + uleb(f); self.file = f

    def set_ctx(self, ctx):                          # NVIDIA extended opcode 0x90
        arg = uleb(ctx[0]) + uleb(ctx[1])
        self.b += b'\x00' + uleb(len(arg) + 1) + b'\x90' + arg; self.ctx = ctx

    def row(self, addr, line, file=None, ctx=None):
        if file is not None and file != self.file: self.set_file(file)
        if ctx is not None and ctx != self.ctx: self.set_ctx(ctx)
        da = addr - self.addr; dl = line - self.line
        op = (dl - LINE_BASE) + LINE_RANGE * da + OPCODE_BASE
        if dl != 0 and LINE_BASE <= dl < LINE_BASE + LINE_RANGE and da > 0 and op <= 255:
            self.b.append(op)                        # special opcode
        else:
            if dl != 0 or da == 0: self.b += b'\x03' + sleb(dl)
            if da: self.b += b'\x02' + sleb(da)      # advance_pc operand is written as SLEB128
            self.b += b'\x01'
        self.addr, self.line = addr, line
        self.nrows += 1
        return self.nrows

    def advance(self, addr):
        if addr != self.addr:
            self.b += b'\x02' + sleb(addr - self.addr); self.addr = addr

    def end(self, addr):
        self.advance(addr)
        self.b += b'\x00\x01\x01'                    # DW_LNE_end_sequence


def unit(header_tail, prog):
    hdr = bytes([1, 1, LINE_BASE & 0xff, LINE_RANGE, OPCODE_BASE]) + STD_LENGTHS + header_tail
    body = struct.pack('<HI', 2, len(hdr)) + hdr + bytes(prog.b)
    base = 4 + 2 + 4 + len(hdr)
    return struct.pack('<I', len(body)) + body, [(base + o, s) for o, s in prog.relocs]

# =============================================================================================
# 5. .debug_line file table
def split_path(name):
    k = max(name.rfind(b'/'), name.rfind(b'\\'))
    return (b'', name) if k <= 0 else (name[:k], name[k + 1:])


def file_table(ptx, cwd):
    """Every .file directive, in increasing index order."""
    dirs = []; entries = []
    for idx in sorted(ptx.files):
        name, ts, sz = ptx.files[idx]
        d, base = split_path(name)
        if d and d not in dirs: dirs.append(d)
        di = dirs.index(d) + 1 if d else 0
        if ts:                                       # explicit non-zero timestamp: taken as written
            mt, size = ts & 0xffffffff, sz or 0
        else:                                        # else stat() the file (0, 0 if missing)
            p = name.decode('latin1')
            try:
                st = os.stat(p if os.path.isabs(p) else os.path.join(cwd, p))
                mt, size = int(st.st_mtime), st.st_size
            except OSError:
                mt, size = 0, 0
        entries.append(base + b'\0' + uleb(di) + uleb(mt) + uleb(size))
    return b''.join(d + b'\0' for d in dirs) + b'\0' + b''.join(entries) + b'\0'

# =============================================================================================
# 6. rows
def sass_rows(insns, fstart, ptx, new):
    """.nv_debug_line_sass rows of one sequence: [addr, ptx line, kind]."""
    rows = []; prev = None; first_after = False
    for (a, pl, txt) in insns:
        if a in fstart:
            prev = ptx.func_open_line[fstart[a]]
            rows.append([a, prev, 'f'])              # function-start row: the '{' line
            first_after = True
            if new and fstart[a] not in ptx.func_first_loc:
                prev = None                          # sm_90+, function without .loc: always a 2nd row
            if UNLOCATED_ENTRY_BSSY and txt.startswith('BSSY'):
                continue
        if pl is None: continue
        if pl != prev:
            rows.append([a, pl, 'r']); prev = pl
        elif first_after and not new and a != rows[-1][0]:
            rows.append([a, pl, 'adv'])              # dropped row; before sm_90 its advance stays
        first_after = False
    if new:                                          # sm_90+: a zero-length function-start row
        for i in range(len(rows) - 1):               # takes the line of the row that follows it
            if rows[i][2] == 'f' and rows[i + 1][0] == rows[i][0]:
                rows[i][1] = rows[i + 1][1]
    return rows


class DebugLine:
    """Streams the .debug_line rows of one sequence."""
    def __init__(self, prog, sym, ptx, new):
        self.p, self.sym, self.ptx, self.new = prog, sym, ptx, new
        self.started = False
        self.pending = None          # sm_90+: deferred function-start row (addr, loc)
        self.after_fstart = False
        self.cs = {}                 # inline instance key -> row number of its call-site row
        self.last_key = None         # (line, ctx) of the last generated row

    def _emit(self, a, loc, ctx):
        if not self.started:
            self.started = True
            n = self.p.start(self.sym, loc[0], loc[1], a)
            return self.p.row(a, loc[1], loc[0], ctx) if ctx != (0, 0) else n
        return self.p.row(a, loc[1], loc[0], ctx)

    def _flush_pending(self, a=None, loc=None):
        pa, ploc = self.pending; self.pending = None
        if a == pa:
            ploc = loc                               # takes the line of the row that follows
            if self.started and ploc[1] == self.p.line:
                self.p.advance(pa); return           # ... and is dropped if that repeats the line
        elif self.started and ploc[1] == self.p.line:
            return
        self._emit(pa, ploc, (0, 0))

    def _row(self, a, loc, ctx):
        if self.pending is not None: self._flush_pending(a, loc)
        return self._emit(a, loc, ctx)

    def function_start(self, a, fl):
        if fl is None: return
        if self.pending is not None: self._flush_pending()
        loc = fl[0][0]                               # outermost frame of the function's first .loc
        self.after_fstart = True
        self.last_key = (loc[1], (0, 0))
        if self.new:
            self.pending = (a, loc)
        elif not self.started:
            self._emit(a, loc, (0, 0))
        elif loc[1] != self.p.line:                  # line-only comparison
            self._emit(a, loc, (0, 0))

    def _ctx(self, ch, k):
        if k == 0: return (0, 0)
        fname, foff = ch[k][1]
        return (self.cs[ch[k][2]], self.ptx.debug_str.get(fname, 0) + foff)

    def insn(self, a, ch):
        first_after = self.after_fstart; self.after_fstart = False
        forced = False
        for k in range(1, len(ch)):
            if ch[k][2] not in self.cs:              # first use of an inline instance:
                self.cs[ch[k][2]] = self._row(a, ch[k - 1][0], self._ctx(ch, k - 1))  # call-site row
                forced = True
        loc = ch[-1][0]; ctx = self._ctx(ch, len(ch) - 1)
        key = (loc[1], ctx)
        if not (forced or first_after or key != self.last_key):
            return
        self.last_key = key
        cur_line = self.pending[1][1] if self.pending is not None else self.p.line
        if forced or loc[1] != cur_line or not self.started and self.pending is None:
            self._row(a, loc, ctx)
        elif not self.new:
            # same line (file not compared): no row; before sm_90 some of its ops stay behind
            if first_after:
                if loc[0] != self.p.file: self.p.set_file(loc[0])
                if ctx != self.p.ctx: self.p.set_ctx(ctx)
                self.p.advance(a)
            elif loc[0] == self.p.file and ctx != self.p.ctx:
                self.p.set_ctx(ctx); self.p.advance(a)

    def finish(self, size):
        if self.pending is not None: self._flush_pending()
        if self.started: self.p.end(size)

# =============================================================================================
def build(ptx_path, cubin_path, cwd='.'):
    src = open(ptx_path, 'rb').read()
    e = Elf(cubin_path)
    ptx = Ptx(src)
    sass = sass_ptx_lines(cubin_path)
    new = e.sm >= 90
    reloc = e.e_type == 1
    # ptxas -c: the PTX-text section is named after the Adler-32 of the whole PTX file, and the
    # .nv_debug_line_sass file table names that section
    txt_name = '.nv_debug_ptx_txt' + ('.%d' % zlib.adler32(src) if reloc else '')
    out = {'.nv_debug_ptx_txt': ptx_txt(src), '.debug_str': ptx.debug_str_bytes, 'txt_name': txt_name}
    funcs_in = {}
    for k, sy in enumerate(e.syms):
        if sy['info'] & 0xf == 2:                    # STT_FUNC
            funcs_in.setdefault(sy['shndx'], []).append((sy['value'], sy['name'], k))
    # one sequence per .text section whose function at offset 0 is a PTX function
    seqs = []
    for si, s in enumerate(e.secs):
        if not s['nm'].startswith('.text.'): continue
        fl = sorted(funcs_in.get(si, []))
        head = [f for f in fl if f[0] == 0]
        if head and head[0][1] in ptx.func_open_line:
            seqs.append((s, fl, head[0], sass.get(s['nm'], [])))
    if new:
        seqs.sort(key=lambda q: q[2][2])             # sm_90+: function-symbol order (else section order)
    sp, dp = Prog(), Prog()
    for s, fl, head, insns in seqs:
        # function starts that come from PTX functions (ptxas helpers like
        # $..$__internal_*_slowpath get no rows of their own)
        fstart = {}
        for (v, n, k) in fl:
            pf = n.split('$')[-1] if v else n
            if pf in ptx.func_open_line: fstart[v] = pf
        for i, (a, pl, kind) in enumerate(sass_rows(insns, fstart, ptx, new)):
            if i == 0: sp.start(head[2], 1 if reloc else 0, pl)
            elif kind == 'adv': sp.advance(a)
            else: sp.row(a, pl)
        sp.end(s['size'])
        dl = DebugLine(dp, head[2], ptx, new)
        for (a, pl, txt) in insns:
            if a in fstart: dl.function_start(a, ptx.func_first_loc.get(fstart[a]))
            ch = ptx.loc_of_line.get(pl) if pl else None
            if ch is not None: dl.insn(a, ch)
        dl.finish(s['size'])
    sass_files = (txt_name.encode() + b'\0' + uleb(0) * 3) if reloc else b''
    out['.nv_debug_line_sass'], out['rel.nv_debug_line_sass'] = unit(b'\0' + sass_files + b'\0', sp)
    tail = file_table(ptx, cwd) + (b'\0\0\0\0' if ptx.uses_inlined_at else b'')
    out['.debug_line'], out['rel.debug_line'] = unit(tail, dp)
    out['uses_inlined_at'] = ptx.uses_inlined_at
    out['str_field'] = 10 + struct.unpack_from('<I', out['.debug_line'], 6)[0] - 4
    return out, e

# =============================================================================================
# verification
def decode_line(b):
    """Decode a line-program section into units with their ops (for diffs)."""
    units = []; p = 0
    while p < len(b):
        ul, = struct.unpack_from('<I', b, p); end = p + 4 + ul
        hl, = struct.unpack_from('<I', b, p + 6); q = p + 10 + hl
        # file table (for header diffs)
        h = p + 10 + 5 + 9; dirs = []; files = []
        while b[h]:
            e_ = b.index(b'\0', h); dirs.append(b[h:e_]); h = e_ + 1
        h += 1
        while b[h]:
            e_ = b.index(b'\0', h); nm = b[h:e_]; h = e_ + 1
            di, h = read_uleb(b, h); mt, h = read_uleb(b, h); sz, h = read_uleb(b, h)
            files.append((nm, di, mt, sz))
        ops = []
        while q < end:
            op = b[q]; q += 1
            if op >= OPCODE_BASE:
                ops.append(('special', (op - OPCODE_BASE) // LINE_RANGE, LINE_BASE + (op - OPCODE_BASE) % LINE_RANGE))
            elif op == 0:
                n, q = read_uleb(b, q)
                sub = b[q]
                if sub == 0x90:
                    x, r = read_uleb(b, q + 1); y, r = read_uleb(b, r); ops.append(('nv_inline', x, y))
                else:
                    ops.append(('ext', sub, b[q + 1:q + n].hex()))
                q += n
            elif op == 1: ops.append(('copy',))
            elif op == 2: v, q = read_sleb(b, q); ops.append(('advance_pc', v))
            elif op == 3: v, q = read_sleb(b, q); ops.append(('advance_line', v))
            elif op == 4: v, q = read_uleb(b, q); ops.append(('set_file', v))
            else: ops.append(('std', op))
        units.append(dict(dirs=dirs, files=files, header_length=hl, ops=ops))
        p = end
    return units


def diff_programs(ref, mine):
    for ua, ub in zip(decode_line(ref), decode_line(mine)):
        for k in ('dirs', 'files', 'header_length'):
            if ua[k] != ub[k]: print('   header', k, ua[k], ub[k])
        oa, ob = ua['ops'], ub['ops']
        for i in range(max(len(oa), len(ob))):
            if (oa[i] if i < len(oa) else None) != (ob[i] if i < len(ob) else None):
                print('   first differing op #%d (ptxas | re-encoded)' % i)
                for j in range(max(0, i - 6), min(max(len(oa), len(ob)), i + 8)):
                    print('     %5d %-36s %s' % (j, oa[j] if j < len(oa) else '-', ob[j] if j < len(ob) else '-'))
                break


def compare(ptx_path, cubin_path, cwd='.', verbose=False):
    src = open(ptx_path, 'rb').read()
    if not expects_sections(src):
        e = Elf(cubin_path)
        present = [n for n in ('.nv_debug_ptx_txt', '.nv_debug_line_sass', '.debug_line') if n in e.byname]
        return {'absent': not present}
    out, e = build(ptx_path, cubin_path, cwd)
    res = {}
    if out['.debug_str'] or '.debug_str' in e.byname:
        res['.debug_str'] = e.data('.debug_str') == out['.debug_str']
    for name in ('.nv_debug_ptx_txt', '.nv_debug_line_sass', '.debug_line'):
        ref = e.data(out['txt_name'] if name == '.nv_debug_ptx_txt' else name); ok = ref == out[name]
        if name != '.nv_debug_ptx_txt':
            rel = e.relocs(name)
            exp = {}
            if e.sm >= 90:       # SHT_RELA, R_CUDA_64 (2) -> function symbol, addend 0, sequence order
                exp['.rela'] = [(o, s, 2, 0) for o, s in out['rel' + name]]
            else:                # SHT_REL, listed last sequence first
                exp['.rel'] = [(o, s, 2, None) for o, s in reversed(out['rel' + name])]
                if name == '.debug_line' and e.e_type == 1 and out['uses_inlined_at']:
                    # ptxas -c before sm_90: the 4-byte header field gets R_CUDA_32 (1) -> .debug_str
                    sym = [k for k, sy in enumerate(e.syms) if sy['name'] == '.debug_str' and sy['info'] & 0xf == 3]
                    exp['.rela'] = [(out['str_field'], sym[0] if sym else -1, 1, 0)]
            if rel != exp:
                ok = False
                if verbose: print('  relocations differ', name, rel, exp)
        res[name] = ok
        if not ok and verbose:
            print('MISMATCH', name, 'ptxas', None if ref is None else len(ref), 'bytes, re-encoded', len(out[name]))
            if ref is not None and name != '.nv_debug_ptx_txt': diff_programs(ref, out[name])
    return res


def main(argv):
    if '--batch' in argv:
        from collections import Counter
        total = Counter()
        for line in open(argv[argv.index('--batch') + 1]):
            f = line.split()
            if not f: continue
            try:
                r = compare(f[0], f[1], f[2] if len(f) > 2 else '.')
                bad = [k for k, v in r.items() if not v]
            except Exception as ex:
                bad = ['error: %r' % ex]
            total['exact' if not bad else 'differs'] += 1
            print('%-7s %s %s' % ('OK' if not bad else 'DIFF', f[0], ' '.join(bad)))
        print('TOTAL', dict(total))
        return
    args = [a for a in argv if not a.startswith('-')]
    cwd = '.'
    if '--cwd' in argv:
        cwd = argv[argv.index('--cwd') + 1]; args.remove(cwd)
    r = compare(args[0], args[1], cwd, verbose='-v' in argv)
    print(' '.join('%s=%s' % (k, 'OK' if v else 'DIFF') for k, v in r.items()))


if __name__ == '__main__':
    main(sys.argv[1:])
