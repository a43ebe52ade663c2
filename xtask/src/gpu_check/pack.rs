//! The job set `gpu-check prepare` writes: every cubin, parameter block and buffer stored once
//! under `jobs/blobs/<name>` (its name is a hash of its bytes), and one JSON object a line in
//! `jobs/jobs.jsonl` naming them. The layout is the one `../shared/hardware/<run>/jobs/` uses,
//! so a run's directory is also what `cargo xtask corpus hwcheck --dir` replays.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

/// A content-addressed blob store with a size budget.
pub struct Pack {
    blobs: PathBuf,
    names: HashSet<String>,
    /// Bytes of distinct blobs written.
    pub bytes: u64,
    /// Bytes the jobs refer to (counting a blob once per reference).
    pub referenced: u64,
}

/// The name of a blob: two 64-bit FNV-1a hashes (different offsets) and the length, hex.
pub fn blob_name(data: &[u8]) -> String {
    let h1 = crate::corpus::fnv1a64(&[data]);
    let h2 = crate::corpus::fnv1a64(&[b"kiln-gpu-check", data]);
    format!("{h1:016x}{h2:016x}{:x}", data.len())
}

impl Pack {
    pub fn create(dir: &Path) -> Result<Pack, String> {
        let blobs = dir.join("jobs/blobs");
        std::fs::create_dir_all(&blobs).map_err(|e| format!("{}: {e}", blobs.display()))?;
        Ok(Pack {
            blobs,
            names: HashSet::new(),
            bytes: 0,
            referenced: 0,
        })
    }

    /// The bytes `data` would add to the pack.
    pub fn cost(&self, data: &[u8]) -> u64 {
        if self.names.contains(&blob_name(data)) {
            0
        } else {
            data.len() as u64
        }
    }

    /// Stores `data` (once) and returns its name.
    pub fn put(&mut self, data: &[u8]) -> Result<String, String> {
        let name = blob_name(data);
        self.referenced += data.len() as u64;
        if self.names.insert(name.clone()) {
            let p = self.blobs.join(&name);
            std::fs::write(&p, data).map_err(|e| format!("{}: {e}", p.display()))?;
            self.bytes += data.len() as u64;
        }
        Ok(name)
    }
}

/// A JSON string literal (the cubin crate's escaper, shared with its listing JSON).
pub use cubin::listing::json_str;

/// One job: a kernel, its launch, its inputs and the two cubins.
pub struct Job {
    pub id: usize,
    pub file: String,
    pub kernel: String,
    pub grid: [u32; 3],
    pub block: [u32; 3],
    pub shared: u32,
    /// (offset, size) of each parameter in the parameter block.
    pub slots: Vec<(u32, u32)>,
    /// Offsets in the parameter block of the pointers to the buffers, in buffer order.
    pub buffers: Vec<usize>,
    pub params: String,
    pub bufs: Vec<String>,
    pub kiln: String,
    pub ptxas: String,
    /// CRC-32 of each buffer after the PTX interpreter ran the launch (None: it could not).
    pub expected: Option<Vec<u32>>,
    /// What the corpus compile stage's check said of kiln's code at this launch: `verified`,
    /// `verified against ptxas`, or `not comparable: <reason>`.
    pub check: String,
}

impl Job {
    pub fn to_json(&self) -> String {
        let list = |v: &[String]| v.iter().map(|s| json_str(s)).collect::<Vec<_>>().join(", ");
        let dims = |d: [u32; 3]| format!("[{}, {}, {}]", d[0], d[1], d[2]);
        let slots: Vec<String> = self
            .slots
            .iter()
            .map(|(o, s)| format!("[{o}, {s}]"))
            .collect();
        let buffers: Vec<String> = self.buffers.iter().map(usize::to_string).collect();
        let expected = match &self.expected {
            Some(c) => format!(
                "[{}]",
                c.iter()
                    .map(|x| format!("\"{x:08x}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            None => "null".into(),
        };
        format!(
            "{{\"id\": \"{}\", \"file\": {}, \"kernel\": {}, \"grid\": {}, \"block\": {}, \"shared\": {}, \"slots\": [{}], \"buffers\": [{}], \"params\": {}, \"bufs\": [{}], \"kiln\": {}, \"ptxas\": {}, \"expected\": {}, \"check\": {}}}",
            self.id,
            json_str(&self.file),
            json_str(&self.kernel),
            dims(self.grid),
            dims(self.block),
            self.shared,
            slots.join(", "),
            buffers.join(", "),
            json_str(&self.params),
            list(&self.bufs),
            json_str(&self.kiln),
            json_str(&self.ptxas),
            expected,
            json_str(&self.check),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blobs_are_stored_once_and_jobs_read_back() {
        let dir = std::env::temp_dir().join(format!("kiln-pack-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let mut pack = Pack::create(&dir).unwrap();
        let a = pack.put(b"same bytes").unwrap();
        assert_eq!(pack.cost(b"same bytes"), 0);
        let b = pack.put(b"same bytes").unwrap();
        let c = pack.put(b"other bytes").unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(pack.bytes, 21);
        assert_eq!(pack.referenced, 31);
        assert_eq!(
            std::fs::read_dir(dir.join("jobs/blobs")).unwrap().count(),
            2
        );
        let job = Job {
            id: 7,
            file: "ptx/a \"b\".ptx".into(),
            kernel: "k".into(),
            grid: [2, 1, 1],
            block: [128, 1, 1],
            shared: 4096,
            slots: vec![(0, 8), (8, 4)],
            buffers: vec![0],
            params: a.clone(),
            bufs: vec![c.clone()],
            kiln: a.clone(),
            ptxas: c.clone(),
            expected: Some(vec![0xdead_beef]),
            check: "not comparable: data race\\x".into(),
        };
        let j = crate::corpus::json::parse(&job.to_json()).unwrap();
        assert_eq!(j.get("id").and_then(|v| v.as_str()), Some("7"));
        assert_eq!(
            j.get("file").and_then(|v| v.as_str()),
            Some("ptx/a \"b\".ptx")
        );
        assert_eq!(
            j.get("check").and_then(|v| v.as_str()),
            Some("not comparable: data race\\x")
        );
        assert_eq!(
            j.get("block")
                .and_then(|v| v.as_array())
                .map(|a| a[0].as_f64()),
            Some(Some(128.0))
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
