//! The generic launch harness: runs one PTX kernel in the reference interpreter (`interp`) and
//! ptxas's cubin of it in the emulator with the same inputs, and compares the results.
//!
//! Inputs, from the kernel's parameter list (deterministic from [`Config::seed`]):
//! * a 64-bit integer parameter (`.u64`/`.s64`/`.b64`) is taken to be a pointer (unless
//!   named in [`Config::scalar_params`]): it gets its
//!   own bounds-checked buffer of [`Config::buffer_bytes`] bytes in global memory, filled word
//!   by word with either a small integer (0..32) or a float in [-8, 8) (so that both index
//!   arithmetic and float code see plausible values);
//! * other integer and float scalars get small random values (integers 1..=16, or 16, 32,
//!   48 or 64 with [`Config::aligned_scalars`]; floats in [-4, 4) in steps of 1/8); larger
//!   `.b8` arrays (structs) get random small bytes;
//! * the grid is [`Config::grid`] CTAs of [`Config::block`] threads (the corpus stages first
//!   bring the block inside the kernel's `.reqntid`/`.maxntid`: `crate::retry::contract_config`),
//!   with [`Config::dynamic_shared`] bytes of dynamic shared memory;
//! * textures ([`interp::Program::texture_uses`]): a 64-bit parameter the kernel fetches
//!   from with `tex` (a `cudaTextureObject_t`) gets a texture instead of a buffer, its
//!   handle (1-based, in the low 32 bits) in the parameter bytes; each texture reference the
//!   kernel (or a function it calls) fetches from gets a texture bound to its name. Shapes:
//!   1D 1024 texels, 2D 64×64, 3D 16×16×16, layered 2D 32×32 with 4 layers; a texture read
//!   with `.f32` destinations has float channels k/8 in [-8, 8) and linear filtering, others
//!   integer channels 0..32 and point sampling; clamped, unnormalized coordinates
//!   ([`interp::texture`]). Textures are inputs only: nothing about them is compared.
//!
//! Both runs use the same [`interp::Memory`] layout (buffers are allocated first, in the same
//! order, so they have the same addresses and pointers stored in memory compare equal; then
//! the textures, in the same order, so they have the same handles, and the same texture
//! references bound, before the cubin is instantiated: its texture-reference relocations
//! resolve to the bound handles), and
//! the same shared memory layout ([`interp::SharedMap`] for the cubin's SM: the reserved block
//! before the user's variables on sm_90, after them before sm_90).
//! Compared: every byte of every buffer after the run, and whether the run trapped (when both
//! trap, only the trap status is compared: the bytes written before a trap depend on the
//! order threads run in). Module `.global` variables are not compared (ptxas and the
//! interpreter lay them out differently).
//!
//! The device-runtime logs (`interp::DeviceLog`: `vprintf` and `__assertfail` calls, recorded
//! by both executors with the same model, `interp::devrt`) are compared too: after runs that
//! completed, every record sorted by (CTA, thread, per-thread sequence) must be equal; after
//! runs that both trapped, the failed assertions' sites, when both runs failed one (which
//! thread got there first depends on the order warps ran in).

use interp::devrt::{self, LogComparison};
use interp::texture::{AddressMode, Filter, TexFormat, TexShape, Texture};
use interp::{Memory, TextureSource, TextureUse, Ty};

use emu::exec::{EmuError, Launch};

mod memo;
pub mod retry;

/// Launch shape and input generation.
#[derive(Debug, Clone)]
pub struct Config {
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub dynamic_shared: u32,
    pub buffer_bytes: usize,
    pub seed: u64,
    /// Warp steps per CTA (emulator) / instructions per CTA (interpreter).
    pub step_limit: u64,
    /// Integer scalars are multiples of 16: for kernels whose vector accesses assume that
    /// sizes and strides keep addresses aligned (a misaligned access is undefined in PTX and
    /// traps on the hardware).
    pub aligned_scalars: bool,
    /// 64-bit parameters (by name) that get scalar values instead of buffers: sizes and
    /// counts that the pointer rule above would make huge.
    pub scalar_params: Vec<String>,
    /// A run that traps on either side is not comparable (instead of comparing trap status):
    /// for launches whose inputs are a guess.
    pub require_no_trap: bool,
    /// Both models read 0 for a `shfl` of a lane outside the executing lanes (undefined in
    /// PTX; see `interp::RunOptions::zero_undefined_lanes`): a kernel that reads such lanes
    /// at every launch (cuda-samples' `reduce7<T, 1/2/4>`) is then compared under one
    /// convention for the undefined values, instead of being not comparable.
    pub zero_undefined_lanes: bool,
}

impl Config {
    /// The interpreter's launch for this configuration with parameter bytes `params`.
    pub fn interp_launch(&self, params: Vec<u8>) -> interp::Launch {
        interp::Launch {
            grid: self.grid,
            block: self.block,
            dynamic_shared: self.dynamic_shared,
            params,
            step_limit: self.step_limit,
        }
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            grid: [2, 1, 1],
            block: [64, 1, 1],
            dynamic_shared: 4096,
            buffer_bytes: 16384,
            seed: 0x5eed,
            step_limit: 200_000,
            aligned_scalars: false,
            scalar_params: Vec::new(),
            require_no_trap: false,
            zero_undefined_lanes: false,
        }
    }
}

/// The outcome of comparing one kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Same bytes and the same trap status.
    Equal,
    /// A real difference: what differs.
    Differ(String),
    /// The emulator cannot run it (unsupported instruction, relocation, ...): the reason.
    Unsupported(String),
    /// Not comparable for a reason outside the emulator (the interpreter does not support the
    /// kernel, a run hit the step limit, ...).
    NotComparable(String),
}

/// A tiny deterministic generator (xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        (self.next_u64() >> 32) % n
    }
}

/// Fills a buffer as the module docs say.
pub fn buffer(rng: &mut Rng, n: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(n + 4);
    while v.len() < n {
        let w: u32 = if rng.below(2) == 0 {
            rng.below(32) as u32
        } else {
            ((rng.below(128) as f32 - 64.0) / 8.0).to_bits()
        };
        v.extend_from_slice(&w.to_le_bytes());
    }
    v.truncate(n);
    v
}

/// A texture of the shape and format a kernel uses, filled as the module docs say.
pub fn texture(rng: &mut Rng, shape: TexShape, format: TexFormat) -> Texture {
    let size = match shape {
        TexShape::D1 => [1024, 1, 1],
        TexShape::D2 => [64, 64, 1],
        TexShape::D3 => [16, 16, 16],
        TexShape::Array2D => [32, 32, 4],
    };
    let filter = match format {
        TexFormat::F32 => Filter::Linear,
        TexFormat::U32 => Filter::Point,
    };
    Texture::new(
        shape,
        size,
        format,
        filter,
        AddressMode::Clamp,
        false,
        |_| {
            [(); 4].map(|()| match format {
                TexFormat::F32 => ((rng.below(128) as f32 - 64.0) / 8.0).to_bits(),
                TexFormat::U32 => rng.below(32) as u32,
            })
        },
    )
}

/// The inputs of one launch: parameter bytes, the buffers to allocate (in order) and the
/// textures to add (in order).
#[derive(Debug, Clone)]
pub struct Inputs {
    pub params: Vec<u8>,
    /// (parameter index, offset in `params`, initial bytes).
    pub buffers: Vec<(usize, usize, Vec<u8>)>,
    /// Textures, added to a memory after the buffers, in this order.
    pub textures: Vec<TextureInput>,
    /// Surface objects, added to a memory after the textures, in this order.
    pub surfaces: Vec<SurfaceInput>,
    /// A cooperative launch: the memory gets the grid-synchronization workspace
    /// (`interp::Memory::alloc_cooperative_workspace`, after the surfaces).
    pub cooperative: bool,
}

/// A surface-object parameter and the surface the harness gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceInput {
    pub param: usize,
    /// Where the handle goes in [`Inputs::params`].
    pub offset: usize,
    pub surface: interp::surface::Surface,
}

/// A surface of `shape` for the harness, 16 KiB of random bytes from `rng`: 1D 16384 bytes,
/// 2D 256 bytes × 64 rows, 3D 64 bytes × 16 × 16, layered 1D 2048 bytes × 8 layers, layered 2D
/// 128 bytes × 32 rows × 4 layers.
pub fn surface(rng: &mut Rng, shape: interp::surface::SurfShape) -> interp::surface::Surface {
    use interp::surface::{SurfShape, Surface};
    let (w, h, d) = match shape {
        SurfShape::D1 => (16384, 1, 1),
        SurfShape::D2 => (256, 64, 1),
        SurfShape::D3 => (64, 16, 16),
        SurfShape::Array1D => (2048, 1, 8),
        SurfShape::Array2D => (128, 32, 4),
    };
    let mut s = Surface::new(shape, w, h, d);
    for b in &mut s.data {
        *b = rng.below(256) as u8;
    }
    s
}

/// Gives the surface-object parameters of `uses` ([`interp::Program::surface_uses`]) a
/// surface each instead of the buffer [`inputs`] gave them (from their own generator, seeded
/// from `cfg.seed`, so that the other inputs keep their values).
pub fn add_surfaces(
    inp: &mut Inputs,
    slots: &[interp::ParamSlot],
    uses: &[interp::SurfaceUse],
    cfg: &Config,
) {
    let mut rng = Rng::new(cfg.seed ^ 0x5f_u64.rotate_left(44));
    for u in uses {
        let Some(s) = slots.get(u.param) else {
            continue;
        };
        if s.size != 8 || s.offset as usize + 8 > inp.params.len() {
            continue;
        }
        inp.buffers.retain(|(i, _, _)| *i != u.param);
        inp.surfaces.push(SurfaceInput {
            param: u.param,
            offset: s.offset as usize,
            surface: surface(&mut rng, u.shape),
        });
    }
}

/// One texture input of a launch.
#[derive(Debug, Clone, PartialEq)]
pub struct TextureInput {
    /// The kernel parameter that carries its handle, or the texture reference bound to it.
    pub source: TextureSource,
    /// For a parameter source: the offset in [`Inputs::params`] where the handle goes.
    pub offset: Option<usize>,
    pub texture: Texture,
}

/// Generates inputs for a kernel with these parameter slots that fetches from `textures`
/// ([`interp::Program::texture_uses`]; empty for a kernel without textures, or for a caller
/// that cannot provide textures).
pub fn inputs(
    slots: &[interp::ParamSlot],
    param_size: usize,
    textures: &[TextureUse],
    cfg: &Config,
) -> Inputs {
    let mut rng = Rng::new(cfg.seed);
    let mut params = vec![0u8; param_size];
    let mut buffers = Vec::new();
    let is_texture = |i: usize| textures.iter().any(|u| u.source == TextureSource::Param(i));
    for (i, s) in slots.iter().enumerate() {
        let at = s.offset as usize;
        let n = s.size as usize;
        if at + n > params.len() {
            continue;
        }
        let bytes: Vec<u8> = match (s.ty, n) {
            // A texture object: its handle is written when the textures are placed.
            (_, 8) if is_texture(i) => continue,
            (Ty::U64 | Ty::S64 | Ty::B64, 8) if !cfg.scalar_params.contains(&s.name) => {
                buffers.push((i, at, buffer(&mut rng, cfg.buffer_bytes)));
                continue;
            }
            (Ty::F32, 4) => (((rng.below(64) as f32) - 32.0) / 8.0)
                .to_le_bytes()
                .to_vec(),
            (Ty::F64, 8) => (((rng.below(64) as f64) - 32.0) / 8.0)
                .to_le_bytes()
                .to_vec(),
            _ if n <= 8 && cfg.aligned_scalars => {
                ((1 + rng.below(4)) * 16).to_le_bytes()[..n].to_vec()
            }
            _ if n <= 8 => (1 + rng.below(16)).to_le_bytes()[..n].to_vec(),
            _ => (0..n).map(|_| rng.below(16) as u8).collect(),
        };
        params[at..at + n].copy_from_slice(&bytes);
    }
    // Textures come from their own generator (seeded from the same seed), so that adding
    // them leaves the other inputs' values alone.
    let mut trng = Rng::new(cfg.seed ^ 0x7e57_u64.rotate_left(40));
    let mut texs = Vec::new();
    for u in textures {
        let offset = match &u.source {
            TextureSource::Param(i) => match slots.get(*i) {
                Some(s) if s.size == 8 && s.offset as usize + 8 <= params.len() => {
                    Some(s.offset as usize)
                }
                _ => continue,
            },
            TextureSource::Texref(_) => None,
        };
        if texs.iter().any(|t: &TextureInput| t.source == u.source) {
            continue;
        }
        texs.push(TextureInput {
            source: u.source.clone(),
            offset,
            texture: texture(&mut trng, u.shape, u.format),
        });
    }
    Inputs {
        params,
        buffers,
        textures: texs,
        surfaces: Vec::new(),
        cooperative: false,
    }
}

/// Allocates the buffers in `mem` and patches their addresses into the parameter bytes; then
/// adds the textures to `mem` (in order, so every memory placed from the same inputs gives
/// each texture the same handle), writes parameter textures' handles into the parameter
/// bytes and binds texture references by name. Call before instantiating a cubin in `mem`
/// (its texture-reference relocations resolve to the bound handles).
pub fn place(inp: &Inputs, mem: &mut Memory) -> (Vec<u8>, Vec<u64>) {
    let mut params = inp.params.clone();
    let mut addrs = Vec::new();
    for (i, at, data) in &inp.buffers {
        let a = mem.alloc(&format!("parameter {i}"), data.clone());
        params[*at..*at + 8].copy_from_slice(&a.to_le_bytes());
        addrs.push(a);
    }
    for t in &inp.textures {
        let h = mem.textures_mut().add(t.texture.clone());
        match (&t.source, t.offset) {
            (TextureSource::Param(_), Some(at)) => {
                params[at..at + 8].copy_from_slice(&u64::from(h).to_le_bytes());
            }
            (TextureSource::Texref(name), _) => mem.textures_mut().bind(name, h),
            (TextureSource::Param(_), None) => {}
        }
    }
    for s in &inp.surfaces {
        let h = mem.surfaces_mut().add(s.surface.clone());
        params[s.offset..s.offset + 8].copy_from_slice(&u64::from(h).to_le_bytes());
    }
    if inp.cooperative {
        mem.alloc_cooperative_workspace();
    }
    (params, addrs)
}

/// The outcome of one side: buffers after the run and whether it trapped.
#[derive(Debug, Clone)]
pub struct Side {
    pub buffers: Vec<Vec<u8>>,
    pub trapped: Option<String>,
}

/// One emulator run: memory after the run, the buffers' addresses, the trap message and the
/// counts of undefined SHFL reads and of WARPSYNCs by lanes outside their mask; an
/// unsupported or non-terminating run is the verdict.
type EmuRun = (Memory, Vec<u64>, Option<String>, (u64, u64));

fn emulate(
    image: &emu::load::Image,
    kernel: &str,
    inp: &Inputs,
    cfg: &Config,
) -> Result<EmuRun, Verdict> {
    let mut emem = Memory::new();
    let (eparams, eaddrs) = place(inp, &mut emem);
    let eprog = match image.instantiate(&mut emem) {
        Ok(p) => p,
        Err(e) => return Err(Verdict::Unsupported(format!("load: {e}"))),
    };
    let elaunch = Launch {
        grid: cfg.grid,
        block: cfg.block,
        dynamic_shared: cfg.dynamic_shared,
        params: eparams,
        step_limit: cfg.step_limit,
    };
    let mut undefined = (0, 0);
    let options = emu::RunOptions {
        zero_undefined_lanes: cfg.zero_undefined_lanes,
    };
    let etrap = match emu::run_with(&eprog, &mut emem, kernel, &elaunch, &options) {
        Ok(st) => {
            undefined = (st.undefined_reads, st.undefined_syncs);
            None
        }
        Err(EmuError::Trap { message, .. }) => Some(message),
        Err(EmuError::Unsupported { reason, .. }) => return Err(Verdict::Unsupported(reason)),
        Err(EmuError::StepLimit) => {
            return Err(Verdict::NotComparable("emu: step limit".into()));
        }
        Err(EmuError::Deadlock(m)) => {
            return Err(Verdict::Differ(format!("emulator deadlock: {m}")));
        }
        Err(EmuError::BadLaunch(m)) => return Err(Verdict::Unsupported(format!("launch: {m}"))),
    };
    Ok((emem, eaddrs, etrap, undefined))
}

/// Runs `kernel` of two cubins of the same PTX (`ours` and a reference, ptxas's) in the
/// emulator on the same inputs (the parameter layout from the PTX) and compares buffers and
/// trap status. For kernels whose PTX semantics the interpreter cannot reproduce bit for bit
/// (approximate math: the hardware's MUFU against exact arithmetic), agreement with ptxas's
/// code under the same MUFU model is the check.
pub fn compare_cubins(
    ptx: &str,
    ours: &[u8],
    theirs: &[u8],
    kernel: &str,
    cfg: &Config,
) -> Verdict {
    let prog = memo::program(ptx);
    let prog = match prog.as_ref() {
        Ok(p) => p,
        Err(e) => return Verdict::NotComparable(format!("interp: lowering: {}", e.message)),
    };
    let Some(k) = prog.kernel(kernel) else {
        return Verdict::NotComparable(format!("interp: no kernel `{kernel}`"));
    };
    let inp = inputs(
        prog.params(k),
        prog.param_size(k) as usize,
        &prog.texture_uses(k),
        cfg,
    );
    let mut runs = Vec::new();
    for bytes in [ours, theirs] {
        let image = memo::image(bytes);
        let image = match image.as_ref() {
            Ok(i) => i,
            Err(e) => return Verdict::Unsupported(format!("load: {e}")),
        };
        match emulate(image, kernel, &inp, cfg) {
            Ok(r) => runs.push(r),
            Err(v) => return v,
        }
    }
    let (a, b) = (&runs[0], &runs[1]);
    if a.2.is_some() != b.2.is_some() {
        return Verdict::Differ(format!(
            "trap status differs: ours {:?}, reference {:?}",
            a.2, b.2
        ));
    }
    let how = if a.2.is_some() {
        LogComparison::Trapped
    } else {
        LogComparison::Complete
    };
    if let Some(d) = devrt::first_difference(
        a.0.device_log(),
        b.0.device_log(),
        how,
        ("ours", "reference"),
    ) {
        return Verdict::Differ(d);
    }
    if a.2.is_some() {
        return Verdict::Equal;
    }
    for (bi, (x, y)) in a.1.iter().zip(&b.1).enumerate() {
        let xb = &a.0.buffer(*x).expect("allocated").data;
        let yb = &b.0.buffer(*y).expect("allocated").data;
        if xb != yb {
            let first = xb.iter().zip(yb).position(|(p, q)| p != q).unwrap_or(0);
            return Verdict::Differ(format!(
                "buffer of parameter {} differs from the reference cubin's, first at byte {first}",
                inp.buffers[bi].0
            ));
        }
    }
    Verdict::Equal
}

/// The harness's inputs for kernel `k` of `prog` (parameters, buffers, textures, surfaces).
pub fn kernel_inputs(prog: &interp::Program, k: u32, cfg: &Config) -> Inputs {
    let slots = prog.params(k).to_vec();
    let mut inp = inputs(
        &slots,
        prog.param_size(k) as usize,
        &prog.texture_uses(k),
        cfg,
    );
    add_surfaces(&mut inp, &slots, &prog.surface_uses(k), cfg);
    inp
}

/// Runs `kernel` of `ptx` in the interpreter and `cubin` in the emulator and compares.
pub fn compare(ptx: &str, cubin: &[u8], kernel: &str, cfg: &Config) -> Verdict {
    compare_on(ptx, cubin, kernel, cfg, None)
}

/// [`compare`] on given inputs (parameter bytes and buffers, e.g. a launch recorded on a GPU)
/// instead of inputs generated from `cfg`'s seed; `cfg` gives the launch shape.
pub fn compare_with_inputs(
    ptx: &str,
    cubin: &[u8],
    kernel: &str,
    cfg: &Config,
    inputs: Inputs,
) -> Verdict {
    compare_on(ptx, cubin, kernel, cfg, Some(inputs))
}

fn compare_on(
    ptx: &str,
    cubin: &[u8],
    kernel: &str,
    cfg: &Config,
    given: Option<Inputs>,
) -> Verdict {
    let prog = memo::program(ptx);
    let prog = match prog.as_ref() {
        Ok(p) => p,
        Err(e) => return Verdict::NotComparable(format!("interp: lowering: {}", e.message)),
    };
    let image = memo::image(cubin);
    let image = match image.as_ref() {
        Ok(i) => i,
        Err(e) => return Verdict::Unsupported(format!("load: {e}")),
    };
    compare_kernel_on(prog, image, kernel, cfg, given)
}

/// [`compare`] with the PTX lowered and the cubin decoded once (for files with many kernels).
pub fn compare_kernel(
    iprog: &interp::Program,
    image: &emu::load::Image,
    kernel: &str,
    cfg: &Config,
) -> Verdict {
    compare_kernel_on(iprog, image, kernel, cfg, None)
}

fn compare_kernel_on(
    iprog: &interp::Program,
    image: &emu::load::Image,
    kernel: &str,
    cfg: &Config,
    given: Option<Inputs>,
) -> Verdict {
    let mut prog = iprog.clone();
    // The interpreter lays out shared memory (the reserved block, the user's variables) as
    // ptxas's code for the cubin's SM expects, whatever the PTX's `.target`.
    prog.set_shared_layout(interp::SharedLayout::for_sm(image.sm()));
    let Some(k) = prog.kernel(kernel) else {
        return Verdict::NotComparable(format!("interp: no kernel `{kernel}`"));
    };
    let mut inp = given.unwrap_or_else(|| kernel_inputs(&prog, k, cfg));
    // A kernel that synchronizes its grid (cooperative groups' `this_grid().sync()`) is
    // launched cooperatively, with one CTA: both machines run CTAs one after another, so a
    // grid-wide barrier can only complete when the grid is a single CTA.
    let coop_cfg;
    let cfg = if prog.reads_cooperative_workspace(k) {
        inp.cooperative = true;
        coop_cfg = Config {
            grid: [1, 1, 1],
            ..cfg.clone()
        };
        &coop_cfg
    } else {
        cfg
    };
    let block = cfg.block;

    // Emulator first: an unsupported kernel is not run in the interpreter at all.
    let (emem, eaddrs, etrap, undefined) = match emulate(image, kernel, &inp, cfg) {
        Ok(r) => r,
        Err(v) => return v,
    };
    // Interpreter.
    let mut imem = Memory::new();
    let (iparams, iaddrs) = place(&inp, &mut imem);
    prog.load(&mut imem);
    let launch = interp::Launch {
        grid: cfg.grid,
        block,
        dynamic_shared: cfg.dynamic_shared,
        params: iparams.clone(),
        step_limit: cfg.step_limit,
    };
    let (mut outside_mask, mut outside_array, mut misaligned_local) = (0, 0, 0);
    // The interpreter runs as a sanitizer: a launch with a data race or an uninitialized read
    // is outside the kernel's contract, so no comparison at it means anything.
    let sanitized = interp::RunOptions {
        schedule: interp::Schedule::RoundRobin,
        sanitize: true,
        zero_undefined_lanes: cfg.zero_undefined_lanes,
    };
    let itrap = match prog.run_with(&mut imem, k, &launch, &sanitized) {
        Ok(st) => {
            if let Some(f) = st.findings.first() {
                return Verdict::NotComparable(format!(
                    "sanitizer: line {}: {}",
                    f.line,
                    f.message()
                ));
            }
            outside_mask = st.outside_mask;
            outside_array = st.outside_array;
            misaligned_local = st.misaligned_local;
            None
        }
        Err(interp::RunError::Trap { message, .. }) => Some(message),
        Err(interp::RunError::Unsupported { reason, .. }) => {
            return Verdict::NotComparable(format!("interp: unsupported: {reason}"));
        }
        Err(interp::RunError::StepLimit) => {
            return Verdict::NotComparable("interp: step limit".into());
        }
        Err(e) => return Verdict::NotComparable(format!("interp: {e}")),
    };
    let ibufs: Vec<Vec<u8>> = iaddrs
        .iter()
        .map(|a| imem.buffer(*a).expect("allocated").data.clone())
        .collect();

    if cfg.require_no_trap && (itrap.is_some() || etrap.is_some()) {
        return Verdict::NotComparable(format!(
            "harness: a run with guessed inputs trapped (interpreter {itrap:?}, emulator {etrap:?})"
        ));
    }
    match (&itrap, &etrap) {
        (Some(_), Some(_)) => {
            return match devrt::first_difference(
                imem.device_log(),
                emem.device_log(),
                LogComparison::Trapped,
                ("interp", "emu"),
            ) {
                Some(d) => Verdict::Differ(d),
                None => Verdict::Equal,
            };
        }
        (Some(i), None) if i.starts_with("misaligned") => {
            // A misaligned access the interpreter checks (wmma matrices) and ptxas's code
            // happens not to fault on: undefined in PTX.
            return Verdict::NotComparable(format!(
                "harness: misaligned access with the generated inputs ({i}); undefined in PTX"
            ));
        }
        (Some(i), None) => {
            return Verdict::Differ(format!("interpreter trapped ({i}), emulator did not"));
        }
        (None, Some(e)) if e.starts_with("shared read") || e.starts_with("shared write") => {
            // The interpreter gives every kernel all `.shared` variables of the module; ptxas
            // gives a kernel only its own, so an access past the kernel's own arrays (with the
            // harness's launch shape) traps only here.
            return Verdict::NotComparable(format!(
                "harness: shared access outside the kernel's own variables ({e}); the interpreter lays out every module .shared variable"
            ));
        }
        (None, Some(e))
            if e.starts_with("misaligned") && e.contains(" Local ") && misaligned_local == 0 =>
        {
            // Every local access the PTX makes is aligned (the interpreter counts those that
            // are not): the compiled code's own frame (its spill slots, its layout of the
            // `.local` variables) is misaligned, which faults on the hardware too.
            return Verdict::Differ(format!(
                "misaligned stack frame: the emulator trapped ({e}) where every .local access of the PTX is aligned"
            ));
        }
        (None, Some(e)) if e.starts_with("misaligned") => {
            // PTX leaves misaligned accesses undefined and the interpreter does not check
            // alignment; the hardware (and the emulator) trap.
            return Verdict::NotComparable(format!(
                "harness: misaligned access with the generated inputs ({e}); undefined in PTX, unchecked by the interpreter"
            ));
        }
        (None, Some(e)) => {
            return Verdict::Differ(format!("emulator trapped ({e}), interpreter did not"));
        }
        (None, None) => {}
    }
    let mut difference = None;
    for (bi, (ib, a)) in ibufs.iter().zip(&eaddrs).enumerate() {
        let eb = &emem.buffer(*a).expect("allocated").data;
        if ib != eb {
            let first = ib.iter().zip(eb).position(|(x, y)| x != y).unwrap_or(0);
            let n = ib.iter().zip(eb).filter(|(x, y)| x != y).count();
            let w = first & !3;
            let hex = |b: &[u8]| -> String {
                b[w..(w + 8).min(b.len())]
                    .iter()
                    .map(|x| format!("{x:02x}"))
                    .collect()
            };
            difference = Some(format!(
                "buffer of parameter {} differs in {n} bytes, first at byte {first}: interp {} emu {}",
                inp.buffers[bi].0,
                hex(ib),
                hex(eb)
            ));
            break;
        }
    }
    let difference = difference.or_else(|| {
        let (is, es) = (imem.surfaces().all(), emem.surfaces().all());
        is.iter().zip(es).enumerate().find_map(|(k, (i, e))| {
            let first = i.data.iter().zip(&e.data).position(|(x, y)| x != y)?;
            let n = i.data.iter().zip(&e.data).filter(|(x, y)| x != y).count();
            Some(format!(
                "surface {k} differs in {n} bytes, first at byte {first}: interp {:#04x} emu {:#04x}",
                i.data[first], e.data[first]
            ))
        })
    });
    let difference = difference.or_else(|| {
        devrt::first_difference(
            imem.device_log(),
            emem.device_log(),
            LogComparison::Complete,
            ("interp", "emu"),
        )
    });
    let Some(difference) = difference else {
        return Verdict::Equal;
    };
    if undefined.0 > 0 && !cfg.zero_undefined_lanes {
        return Verdict::NotComparable(format!(
            "undefined behaviour: {} SHFL read(s) of lanes outside the executing lanes (PTX leaves the value undefined; the interpreter and the emulator read different stale registers)",
            undefined.0
        ));
    }
    if undefined.1 > 0 || outside_mask > 0 {
        return Verdict::NotComparable(format!(
            "undefined behaviour: {} warp-synchronous instruction(s) executed by a thread outside their member mask (undefined in PTX)",
            undefined.1.max(outside_mask)
        ));
    }
    if outside_array > 0 {
        return Verdict::NotComparable(format!(
            "undefined behaviour: {outside_array} shared access(es) outside the .shared array their address derives from (what they touch depends on the shared-memory layout, which ptxas and the interpreter choose differently)"
        ));
    }
    if let Some(race) = interleaving_dependence(&prog, k, &inp, cfg, &ibufs, itrap.is_some()) {
        return Verdict::NotComparable(race);
    }
    Verdict::Differ(difference)
}

/// Runs the launch in the interpreter again with its threads interleaved another way
/// ([`interp::Schedule::Interleaved`]); `first` holds the buffers of the round-robin run.
/// Every order is a legal execution of race-free PTX, so a different result means the PTX
/// itself races (or orders atomics) at this launch: the reason, or `None` when both orders
/// agree (or the second run cannot finish).
fn interleaving_dependence(
    prog: &interp::Program,
    k: u32,
    inp: &Inputs,
    cfg: &Config,
    first: &[Vec<u8>],
    first_trapped: bool,
) -> Option<String> {
    let mut prog = prog.clone();
    let mut mem = Memory::new();
    let (params, addrs) = place(inp, &mut mem);
    prog.load(&mut mem);
    let launch = cfg.interp_launch(params);
    let options = interp::RunOptions {
        schedule: interp::Schedule::Interleaved,
        zero_undefined_lanes: cfg.zero_undefined_lanes,
        ..interp::RunOptions::default()
    };
    let trapped = match prog.run_with(&mut mem, k, &launch, &options) {
        Ok(_) => false,
        Err(interp::RunError::Trap { .. }) => true,
        Err(_) => return None,
    };
    if trapped != first_trapped {
        return Some(format!(
            "data race: the PTX traps in one thread interleaving and not in another at this launch (grid {:?}, block {:?})",
            cfg.grid, cfg.block
        ));
    }
    for (bi, (a, f)) in addrs.iter().zip(first).enumerate() {
        let b = &mem.buffer(*a).expect("allocated").data;
        if b != f {
            let n = b.iter().zip(f).filter(|(x, y)| x != y).count();
            return Some(format!(
                "data race: the PTX's result depends on how threads interleave at this launch (grid {:?}, block {:?}): buffer of parameter {} differs in {n} bytes between two interpreter schedules",
                cfg.grid, cfg.block, inp.buffers[bi].0
            ));
        }
    }
    None
}

/// Whether the PTX's result at the harness's launch for `cfg` (on `sm`'s shared-memory layout)
/// depends on the order in which the interpreter runs its threads: the reason when it does.
/// `Err` when the interpreter cannot run it.
pub fn schedule_dependence(
    ptx: &str,
    kernel: &str,
    sm: u32,
    cfg: &Config,
) -> Result<Option<String>, String> {
    let mut prog = memo::program(ptx).as_ref().clone().map_err(|e| e.message)?;
    prog.set_shared_layout(interp::SharedLayout::for_sm(sm));
    let k = prog
        .kernel(kernel)
        .ok_or_else(|| format!("no kernel `{kernel}`"))?;
    let inp = kernel_inputs(&prog, k, cfg);
    let mut mem = Memory::new();
    let (params, addrs) = place(&inp, &mut mem);
    prog.load(&mut mem);
    let launch = cfg.interp_launch(params);
    let options = interp::RunOptions {
        zero_undefined_lanes: cfg.zero_undefined_lanes,
        ..interp::RunOptions::default()
    };
    let trapped = match prog.run_with(&mut mem, k, &launch, &options) {
        Ok(_) => false,
        Err(interp::RunError::Trap { .. }) => true,
        Err(e) => return Err(e.to_string()),
    };
    let bufs: Vec<Vec<u8>> = addrs
        .iter()
        .map(|a| mem.buffer(*a).expect("allocated").data.clone())
        .collect();
    Ok(interleaving_dependence(&prog, k, &inp, cfg, &bufs, trapped))
}
