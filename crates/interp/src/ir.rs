//! The interpreter's lowered form of a PTX module: names resolved to register slots, labels to
//! instruction indices, variables to addresses, modifiers parsed into flags, once per module.

use crate::float::Rnd;
use crate::mem::{ReservedSmem, SharedLayout};
use crate::texture::TexShape;

/// A PTX data type (the one parser of type names is `ptx::Type`).
pub use ptx::Type as Ty;

/// A state space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Space {
    Generic,
    Global,
    Shared,
    /// `.shared::cluster` (a cluster of one CTA here).
    SharedCluster,
    Local,
    Const,
    Param,
}

/// Where a variable lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Loc {
    /// A fixed address in its space (module globals, constants, shared variables, kernel
    /// parameters).
    Static(u64),
    /// Offset in the current call frame's local area.
    FrameLocal(u64),
    /// Offset in the current call frame's parameter area.
    FrameParam(u64),
}

/// A resolved variable reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarRef {
    pub space: Space,
    pub loc: Loc,
}

/// A literal.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Imm {
    Int(u64),
    F32Bits(u32),
    F64(f64),
}

/// A special register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sreg {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    Laneid,
    Warpid,
    Nwarpid,
    Smid,
    Nsmid,
    Gridid,
    LanemaskEq,
    LanemaskLe,
    LanemaskLt,
    LanemaskGe,
    LanemaskGt,
    Clock,
    ClockHi,
    Clock64,
    Globaltimer,
    GlobaltimerLo,
    GlobaltimerHi,
    DynamicSmemSize,
    TotalSmemSize,
    /// `%reserved_smem_offset_{0,1,begin,end,cap}` (see [`crate::mem::SharedMap`]).
    ReservedSmem(ReservedSmem),
    /// `%pmN`: read as zero here (documented).
    Zero,
    /// The cluster registers (sm_90). Every launch here is a launch without clusters: each
    /// CTA is a cluster of one (`%cluster_ctaid` 0, `%cluster_nctaid` 1, `%clusterid` the
    /// CTA's index, `%nclusterid` the grid, rank 0 of 1, `%is_explicit_cluster` false).
    ClusterCtaid(u8),
    ClusterNctaid(u8),
    Clusterid(u8),
    Nclusterid(u8),
    ClusterCtarank,
    ClusterNctarank,
    IsExplicitCluster,
    /// `%envreg1` / `%envreg2`: the high / low word of the cooperative-launch workspace
    /// address (`crate::Memory::cooperative_workspace`); a launch without one cannot run it.
    CooperativeWorkspace(bool),
}

/// An operand after name resolution.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand {
    /// A register slot of the current frame.
    Reg(u32),
    /// `reg + imm` used as a value.
    RegOff(u32, i64),
    /// `!p` used as a source.
    NotPred(u32),
    Imm(Imm),
    Sreg(Sreg),
    /// `{a, b, ...}`
    Vec(Vec<Operand>),
    /// `[base + offset]`
    Addr {
        base: AddrBase,
        offset: i64,
    },
    /// A variable's address used as a value (`mov.u64 r, sym;`, `sym+4`): its address in its
    /// own space, or its generic address inside `generic(sym)`.
    VarAddr {
        var: VarRef,
        offset: i64,
        generic: bool,
    },
    /// A function's address (`mov.u64 r, func;`), the function index.
    Func(u32),
    /// A branch target.
    Label(u32),
    /// A texture reference (a `.texref` or `.tex` module variable) named as the texture of a
    /// `tex`: the handle bound to this name in the memory's [`crate::texture::Textures`].
    Texref(String),
    Sink,
}

/// The base of an address operand.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AddrBase {
    /// An absolute address.
    None,
    Reg(u32),
    Var(VarRef),
}

/// Comparison operators of `setp`/`set`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

/// Boolean combination of `setp`/`set`/`bar.red`/`vote`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoolOp {
    And,
    Or,
    Xor,
}

/// Atomic / reduction operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtomOp {
    And,
    Or,
    Xor,
    Cas,
    Exch,
    Add,
    Inc,
    Dec,
    Min,
    Max,
}

/// The opcodes the interpreter knows. `Unsupported` carries the reason and is reported when
/// executed (never silently skipped).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Mov,
    Ld,
    St,
    Add,
    Sub,
    Mul,
    Mad,
    Mul24,
    Mad24,
    Sad,
    Div,
    Rem,
    Abs,
    Neg,
    Min,
    Max,
    Popc,
    Clz,
    Bfind,
    Brev,
    Bfe,
    Bfi,
    Fns,
    Szext,
    Bmsk,
    Dp4a,
    /// The video instructions (`vadd`, `vset2`, `vabsdiff4`, ...): `Mods::video`.
    Video,
    Dp2a,
    Addc,
    Subc,
    Madc,
    Testp,
    Copysign,
    Fma,
    Rcp,
    Sqrt,
    Rsqrt,
    Sin,
    Cos,
    Lg2,
    Ex2,
    Tanh,
    Set,
    Setp,
    Selp,
    Slct,
    And,
    Or,
    Xor,
    Not,
    Cnot,
    Lop3,
    Shf,
    Shl,
    Shr,
    Prmt,
    Cvt,
    CvtPack,
    Cvta,
    Isspacep,
    Bra,
    Call,
    Ret,
    Exit,
    Trap,
    Bar,
    BarWarp,
    Membar,
    Atom,
    Red,
    Vote,
    Match,
    Activemask,
    /// `elect.sync d|p, membermask`.
    Elect,
    Redux,
    Shfl,
    /// `ldmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].b16`
    Ldmatrix,
    /// `stmatrix.sync.aligned.m8n8.{x1,x2,x4}[.trans].shared.b16 [a], {r...}`: the inverse of
    /// `ldmatrix` (args: the address, the registers).
    Stmatrix,
    /// `movmatrix.sync.aligned.m8n8.trans.b16 d, a`: transposes the 8×8 matrix the warp holds
    /// in `ldmatrix`'s layout.
    Movmatrix,
    /// `mma.sync.aligned.mMnNkK.row.col` of the shapes `crate::mma::sync_shape` implements
    Mma,
    /// `wmma.{load.a,load.b,load.c,store.d,mma}.sync.aligned` (see `Mods::wmma`)
    Wmma,
    /// `tex[.level].{1d,2d,3d,a2d}.v4.{f32,u32,s32}.{s32,f32} {d0..d3}, [tex, {coords}][, lod]`:
    /// args are the destination vector, the texture (a [`Operand::Texref`] or a register
    /// holding a handle), the coordinate vector (for `a2d` the layer first) and the level of
    /// detail (evaluated and ignored: every modelled texture has one level).
    Tex,
    /// `suld.b.{1d,2d,3d,a1d,a2d}[.v2|.v4].{b8,b16,b32,b64}.{trap,clamp,zero} d, [surf,
    /// {coords}]`: args are the destination vector, the surface handle register and the
    /// coordinate vector (x in bytes; for layered shapes the layer first, as in PTX).
    Suld,
    /// `sust.b...  [surf, {coords}], values`: args are the handle register, the coordinate
    /// vector and the value vector.
    Sust,
    /// `cp.async.{ca,cg}.shared{::cta}.global [dst], [src], size{, src-size | ignore-src}`:
    /// args are the destination and source addresses, the copy size and the optional source
    /// size (a value) or `ignore-src` predicate (a cache-policy operand is dropped at
    /// lowering). Completes at once: PTX lets a thread read the destination only after
    /// `cp.async.wait_group`/`wait_all`; the sanitizer reports earlier accesses.
    CpAsync,
    /// `cp.async.commit_group` (for the sanitizer; no effect on values).
    CpAsyncCommit,
    /// `cp.async.wait_group N` (args: N) or `cp.async.wait_all` (no args), for the sanitizer.
    CpAsyncWait,
    /// `mbarrier.*` and `cp.async.mbarrier.arrive`: the operation is `Mods::mbar`
    /// ([`crate::mbarrier`] models the object).
    Mbarrier,
    Nop,
    Unsupported,
}

/// Parsed modifiers. Unknown but semantically irrelevant modifiers (cache hints, memory
/// ordering and scope in a sequential machine) are dropped at lowering; unknown relevant ones
/// make the instruction `Unsupported`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mods {
    pub rnd: Option<Rnd>,
    /// Integer rounding of float→float/int `cvt` (`.rni` ...).
    pub irnd: Option<Rnd>,
    pub rna: bool,
    pub ftz: bool,
    pub sat: bool,
    pub satfinite: bool,
    pub relu: bool,
    pub approx: bool,
    pub nan: bool,
    pub xorsign_abs: bool,
    pub cc: bool,
    pub hi: bool,
    pub lo: bool,
    pub wide: bool,
    pub sync: bool,
    pub shiftamt: bool,
    pub wrap: bool,
    pub clamp: bool,
    pub left: bool,
    pub right: bool,
    pub to: bool,
    pub uni: bool,
    pub cmp: Option<Cmp>,
    pub boolop: Option<BoolOp>,
    pub space: Option<Space>,
    pub vec: u8,
    pub atom: Option<AtomOp>,
    /// shfl mode: 0 up, 1 down, 2 bfly, 3 idx.
    pub shfl: u8,
    /// vote mode: 0 all, 1 any, 2 uni, 3 ballot; match: 0 any, 1 all.
    pub mode: u8,
    /// bar: 0 sync, 1 arrive, 2 red; redux: popc flag in `boolop`.
    pub bar: u8,
    pub popc: bool,
    /// prmt mode: 0 default, 1 f4e, 2 b4e, 3 rc8, 4 ecl, 5 ecr, 6 rc16.
    pub prmt: u8,
    /// A contracted `add`/`sub` (`Op::Fma` built from it): (negate the product, negate the
    /// addend).
    pub fma_negate: (bool, bool),
    /// A memory operation with ordering (`.volatile`, `.relaxed`, `.acquire`, `.release`,
    /// `.acq_rel`, `.sc`): the sanitizer takes it as synchronization (flags, spin-waits).
    pub strong: bool,
    /// testp class: 0 finite 1 infinite 2 number 3 notanumber 4 normal 5 subnormal.
    pub testp: u8,
    /// Matrix shape `.mMnNkK` of mma / ldmatrix (k is 0 for `.m8n8`).
    pub shape: Option<(u8, u8, u8)>,
    /// ldmatrix `.x1/.x2/.x4`.
    pub xn: u8,
    pub trans: bool,
    /// mma operand layouts: `.row` (true) / `.col` (false), for A then B.
    pub layouts: Vec<bool>,
    /// `wmma`: which operation (`.load.a/.b/.c`, `.store.d`, `.mma`).
    pub wmma: Option<WmmaOp>,
    /// `tex` geometry (`.1d`, `.2d`, `.3d`, `.a2d`).
    pub tex: Option<TexShape>,
    /// `suld`/`sust`: the surface shape and the out-of-bounds mode.
    pub surf: Option<(crate::surface::SurfShape, crate::surface::OutOfBounds)>,
    /// `tex.level`: an explicit level-of-detail operand follows the coordinates.
    pub level: bool,
    /// `mbarrier`: which operation.
    pub mbar: Option<crate::mbarrier::MbarOp>,
    /// A video instruction: its operation and lanes, `vmad`'s `.shr7`/`.shr15` (7, 15) and
    /// `.po`, and the selectors of `a`, `b` and `d` with `vmad`'s negations (set when the
    /// operands are lowered).
    pub video: Option<VideoMods>,
    pub types: Vec<Ty>,
}

/// What a video instruction carries besides the common modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VideoMods {
    pub video: crate::video::Video,
    pub shr: u8,
    pub po: bool,
    pub sel: [crate::video::Sel; 3],
    pub negate: [bool; 3],
}

/// The operation of a `wmma` instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WmmaOp {
    Load(crate::mma::Frag),
    Store,
    Mma,
}

impl Mods {
    /// The first type modifier (the instruction type), `.b32` if none.
    pub fn ty(&self) -> Ty {
        self.types.first().copied().unwrap_or(Ty::B32)
    }
    /// The second type modifier (source type of `cvt`, `set`, ...).
    pub fn ty2(&self) -> Ty {
        self.types.get(1).copied().unwrap_or_else(|| self.ty())
    }
}

/// A lowered instruction.
#[derive(Debug, Clone, PartialEq)]
pub struct Inst {
    pub guard: Option<(u32, bool)>,
    pub op: Op,
    pub mods: Mods,
    pub args: Vec<Operand>,
    /// For `call`: the callee and return/argument operand lists (in `args`: rets then args).
    pub call: Option<CallInfo>,
    /// Why `op` is `Unsupported`.
    pub unsupported: Option<String>,
    /// Source line (1-based) for reports.
    pub line: u32,
    /// The instruction's text (for reports).
    pub text: String,
}

/// Call details.
#[derive(Debug, Clone, PartialEq)]
pub struct CallInfo {
    /// Function index, or `None` for an indirect call through a register (args[0]).
    pub func: Option<u32>,
    pub rets: Vec<Operand>,
    pub args: Vec<Operand>,
}

/// A function parameter or return value.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSlot {
    pub name: String,
    /// `.reg` parameters are register slots (`vec` consecutive ones for `.reg .v2`/`.v4`);
    /// `.param` ones live in the frame's param area.
    pub reg: Option<u32>,
    pub vec: u32,
    /// Offset in the frame param area (for `.param`), or in the kernel parameter buffer.
    pub offset: u64,
    pub size: u64,
    pub ty: Ty,
}

/// A lowered function.
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    pub name: String,
    pub is_entry: bool,
    /// Whether it has a body (declarations without one cannot be called).
    pub defined: bool,
    pub params: Vec<ParamSlot>,
    pub rets: Vec<ParamSlot>,
    /// Declared width (bits) of each register slot; predicates have width 1.
    pub reg_bits: Vec<u32>,
    pub body: Vec<Inst>,
    /// Bytes of `.local` storage per call frame.
    pub local_size: u64,
    /// Bytes of `.param` storage per call frame (parameters, return values, and `.param`
    /// variables declared in the body).
    pub param_size: u64,
    /// Bytes of the declared parameters alone (a kernel's parameter buffer).
    pub args_size: u64,
    /// Per instruction: for a shared-memory access, the offset of the static shared array
    /// its address derives from ([`crate::provenance`]).
    pub shared_arrays: Vec<Option<u64>>,
}

/// A lowered module.
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    pub functions: Vec<Function>,
    /// Initial image of module `.global` variables (one allocation).
    pub globals: Vec<u8>,
    /// Initial image of the constant bank.
    pub consts: Vec<u8>,
    /// Bytes of static shared memory (module and function `.shared` variables).
    pub shared_static: u64,
    /// The static `.shared` arrays: (offset, size in bytes).
    pub shared_vars: Vec<(u64, u64)>,
    /// Bytes of module-scope `.local` variables (at the bottom of every thread's local area).
    pub local_static: u64,
    /// Alignment of the dynamic shared area (start of `extern .shared` arrays).
    pub dyn_shared_align: u64,
    /// Where the driver-reserved block lies in each CTA's shared memory (from `.target`;
    /// [`crate::Program::set_shared_layout`] overrides it). Static shared offsets above are
    /// relative to [`SharedLayout::user_base`].
    pub shared_layout: SharedLayout,
    /// Generic address of the `.global` variable image (set by [`crate::mem::Memory`]).
    pub global_base: u64,
    /// Pointers to patch once addresses are known: (offset in globals/consts image, target).
    pub relocs: Vec<Reloc>,
}

/// An initializer that holds an address (`.global .u64 p = sym;`).
#[derive(Debug, Clone, PartialEq)]
pub struct Reloc {
    pub in_const: bool,
    pub offset: u64,
    pub size: u32,
    pub target: VarRef,
    pub addend: i64,
    pub generic: bool,
}
