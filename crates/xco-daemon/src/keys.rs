//! Key files and randomness.
//!
//! - The **master secret** (`xco-daemon keygen FILE`): 32 random bytes in hex,
//!   held by the controller only. It yields the controller's Ed25519 signing
//!   key and every host's MAC key (`xco_core::wire::auth`).
//! - An **agent key file** (`xco-daemon agent-key ... FILE`), one per host:
//!   the host's name, its MAC key and the controller's public key. It lets
//!   that host speak as itself and check directives — nothing more.
//!
//! Every key file is written with mode 0600 (an existing file's mode is fixed
//! before the key is written into it) and refused when group or others may
//! read or write it, or when its key is shorter than 256 bits.

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use xco_core::wire::MIN_KEY_BYTES;

/// `n` bytes from the kernel's random source.
pub fn random_bytes<const N: usize>() -> Result<[u8; N], String> {
    let mut b = [0u8; N];
    std::fs::File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut b))
        .map_err(|e| format!("/dev/urandom: {e}"))?;
    Ok(b)
}

/// A random u64 (run ids, join nonces).
pub fn random_u64() -> Result<u64, String> {
    Ok(u64::from_be_bytes(random_bytes::<8>()?))
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 || !s.is_ascii() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

/// Write `text` to `path` readable by its owner only (an existing file's
/// mode is set to 0600 before anything is written into it).
pub fn write_secret(path: &str, text: &str) -> Result<(), String> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| format!("{path}: {e}"))?;
    f.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(|e| format!("{path}: cannot make it private (chmod 600): {e}"))?;
    f.set_len(0).map_err(|e| format!("{path}: {e}"))?;
    f.write_all(text.as_bytes()).map_err(|e| format!("{path}: {e}"))
}

/// Read a key file, refusing one that group or others may read or write.
pub fn read_secret(path: &str) -> Result<String, String> {
    let f = std::fs::File::open(path).map_err(|e| format!("key file {path}: {e}"))?;
    let meta = f.metadata().map_err(|e| format!("key file {path}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("key file {path}: not a regular file"));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "key file {path}: mode {mode:04o} lets group or others read or write it; \
             make it private with `chmod 600 {path}`"
        ));
    }
    let mut text = String::new();
    f.take(64 * 1024)
        .read_to_string(&mut text)
        .map_err(|e| format!("key file {path}: {e}"))?;
    Ok(text)
}

fn parse_key(path: &str, what: &str, hex_text: &str) -> Result<Vec<u8>, String> {
    let key = unhex(hex_text.trim()).ok_or_else(|| format!("key file {path}: {what} is not hexadecimal"))?;
    if key.len() < MIN_KEY_BYTES {
        return Err(format!(
            "key file {path}: {what} has {} bits; at least {} are needed (make one with `xco-daemon keygen`)",
            key.len() * 8,
            MIN_KEY_BYTES * 8
        ));
    }
    Ok(key)
}

/// Write a new random master secret to `path`.
pub fn keygen(path: &str) -> Result<(), String> {
    let key = random_bytes::<32>()?;
    write_secret(path, &format!("{}\n", hex(&key)))
}

/// Read a master secret (hex, at least 256 bits).
pub fn read_master(path: &str) -> Result<Vec<u8>, String> {
    let text = read_secret(path)?;
    if text.contains("host_key") {
        return Err(format!(
            "key file {path}: this is an agent key file; the controller needs the master secret"
        ));
    }
    parse_key(path, "the master secret", &text)
}

/// What an agent holds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentKeyFile {
    /// The host it belongs to.
    pub host: String,
    /// The host's MAC key.
    pub host_key: Vec<u8>,
    /// The controller's Ed25519 public key.
    pub controller_public: [u8; 32],
}

impl AgentKeyFile {
    /// The text of the file.
    pub fn render(&self) -> String {
        format!(
            "# xco agent key of host {h}: speaks as {h} only, checks the controller's signatures\n\
             host = {h}\nhost_key = {}\ncontroller_public = {}\n",
            hex(&self.host_key),
            hex(&self.controller_public),
            h = self.host
        )
    }

    /// Read and check an agent key file.
    pub fn read(path: &str) -> Result<AgentKeyFile, String> {
        let text = read_secret(path)?;
        let mut host = None;
        let mut key = None;
        let mut public = None;
        for line in text.lines().map(str::trim) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let Some((k, v)) = line.split_once('=') else {
                return Err(format!(
                    "key file {path}: '{line}' is not `name = value` (an agent key file \
                     comes from `xco-daemon agent-key`)"
                ));
            };
            let v = v.trim();
            match k.trim() {
                "host" => host = Some(v.to_string()),
                "host_key" => key = Some(parse_key(path, "host_key", v)?),
                "controller_public" => {
                    let b = unhex(v).filter(|b| b.len() == 32).ok_or_else(|| {
                        format!("key file {path}: controller_public is not 32 bytes of hex")
                    })?;
                    public = Some(b.try_into().expect("32 bytes"));
                }
                other => return Err(format!("key file {path}: unknown field '{other}'")),
            }
        }
        let missing = |f: &str| format!("key file {path}: no {f} (make it with `xco-daemon agent-key`)");
        Ok(AgentKeyFile {
            host: host.ok_or_else(|| missing("host"))?,
            host_key: key.ok_or_else(|| missing("host_key"))?,
            controller_public: public.ok_or_else(|| missing("controller_public"))?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> String {
        let d = std::env::temp_dir().join(format!("xco-keys-{}-{name}", std::process::id()));
        let _ = std::fs::remove_file(&d);
        d.to_string_lossy().into_owned()
    }

    fn mode(p: &str) -> u32 {
        std::fs::metadata(p).unwrap().mode() & 0o777
    }

    #[test]
    fn keygen_makes_a_private_file_even_over_a_world_readable_one() {
        let p = tmp("master");
        keygen(&p).unwrap();
        assert_eq!(mode(&p), 0o600);
        assert_eq!(read_master(&p).unwrap().len(), 32);
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        keygen(&p).unwrap();
        assert_eq!(mode(&p), 0o600, "an existing 0644 file is made private");
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn open_short_or_garbled_keys_are_refused() {
        let p = tmp("bad");
        keygen(&p).unwrap();
        for m in [0o666, 0o640, 0o604, 0o620] {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(m)).unwrap();
            let e = read_master(&p).unwrap_err();
            assert!(e.contains("chmod 600") && e.contains(&format!("{m:04o}")), "{e}");
        }
        write_secret(&p, "0123456789abcdef\n").unwrap();
        let e = read_master(&p).unwrap_err();
        assert!(e.contains("64 bits; at least 256"), "{e}");
        write_secret(
            &p,
            "xyz-not-hex-xyz-not-hex-xyz-not-hex-xyz-not-hex-xyz-not-hex-abcd\n",
        )
        .unwrap();
        assert!(read_master(&p).unwrap_err().contains("not hexadecimal"));
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn an_agent_key_file_round_trips_and_is_checked() {
        let p = tmp("agent");
        let k = AgentKeyFile {
            host: "h7".into(),
            host_key: vec![7; 32],
            controller_public: [9; 32],
        };
        write_secret(&p, &k.render()).unwrap();
        assert_eq!(AgentKeyFile::read(&p).unwrap(), k);
        assert!(read_master(&p).unwrap_err().contains("agent key file"));
        write_secret(&p, &k.render().replace("host = h7\n", "")).unwrap();
        assert!(AgentKeyFile::read(&p).unwrap_err().contains("no host"));
        let short = AgentKeyFile {
            host_key: vec![7; 16],
            ..k
        };
        write_secret(&p, &short.render()).unwrap();
        assert!(AgentKeyFile::read(&p).unwrap_err().contains("128 bits"));
        std::fs::remove_file(&p).unwrap();
    }
}
