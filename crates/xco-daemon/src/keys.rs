//! Key files and randomness.
//!
//! - The **master secret** (`xco-daemon keygen FILE`): 32 random bytes in hex,
//!   held by the controller only. It yields the controller's Ed25519 signing
//!   key and every host's MAC key (`xco_core::wire::auth`).
//! - An **agent key file** (`xco-daemon agent-key ... FILE`), one per host:
//!   the host's name, its MAC key and the controller's public key. It lets
//!   that host speak as itself and check directives — nothing more.
//!
//! Key files are handled as ssh handles its own:
//! - **written** only as a new regular file of mode 0600, created with
//!   `O_EXCL | O_NOFOLLOW` (never through a link, never onto a device or a
//!   FIFO, never changing the mode of a file that exists). `keygen` refuses an
//!   existing master secret unless `--force` (then a new file is renamed over
//!   it: the directory entry is replaced, whatever it pointed to is not
//!   touched); an agent key file is always replaced that way;
//! - **read** only from a regular file (opened with `O_NOFOLLOW |
//!   O_NONBLOCK`, so a FIFO never blocks and a link is refused) owned by the
//!   daemon's user, mode 0600 or stricter, at most 64 KiB, in a directory that
//!   neither group nor others may write;
//! - **refused** when a key is shorter than 256 bits or degenerate (every byte
//!   the same; a controller public key of small order).

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
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

/// The most a key file may hold.
pub const MAX_KEY_FILE_BYTES: u64 = 64 * 1024;

fn parent_of(path: &str) -> std::path::PathBuf {
    match std::path::Path::new(path).parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    }
}

/// Refuse a key file's directory that group or others may write (they could
/// replace the file), as ssh does.
fn check_dir(path: &str) -> Result<(), String> {
    let dir = parent_of(path);
    let meta = std::fs::metadata(&dir).map_err(|e| format!("key file {path}: its directory: {e}"))?;
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(format!(
            "key file {path}: its directory {} (mode {mode:04o}) may be written by group or others, \
             who could replace the key; keep keys in a private directory (chmod 700 it)",
            dir.display()
        ));
    }
    Ok(())
}

/// Create `path` as a new regular file of mode 0600 holding `text` (never
/// through a link, never over anything that exists).
fn create_new(path: &str, text: &str) -> Result<(), String> {
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| format!("{path}: {e}"))?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.sync_all())
        .map_err(|e| format!("{path}: {e}"))
}

/// What exists at `path` (not following a link): None if nothing.
fn existing(path: &str) -> Result<Option<std::fs::Metadata>, String> {
    match std::fs::symlink_metadata(path) {
        Ok(m) => Ok(Some(m)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("{path}: {e}")),
    }
}

/// Write `text` to `path`, readable by its owner only: a new regular file,
/// or with `replace` a new file renamed over an existing regular file (a
/// device, FIFO, directory or link at `path` is refused and left alone).
pub fn write_secret(path: &str, text: &str, replace: bool) -> Result<(), String> {
    check_dir(path)?;
    match existing(path)? {
        None => create_new(path, text),
        Some(m) if !m.file_type().is_file() => Err(format!(
            "{path}: exists and is not a regular file (a link, device, FIFO or directory); \
             key files are written only as new regular files: give another path"
        )),
        Some(_) if !replace => Err(format!(
            "{path}: exists; keygen never overwrites a key (every host's key comes from it): \
             give another path, or pass --force to replace it"
        )),
        Some(_) => {
            let dir = parent_of(path);
            let name = std::path::Path::new(path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let tmp = dir.join(format!(".{name}.new-{}", std::process::id()));
            let tmp = tmp.to_string_lossy().into_owned();
            create_new(&tmp, text)?;
            std::fs::rename(&tmp, path).map_err(|e| {
                let _ = std::fs::remove_file(&tmp);
                format!("{path}: {e}")
            })
        }
    }
}

/// Read a key file: a regular file owned by this user, private, bounded, in a
/// directory only its owner writes (see the module doc).
pub fn read_secret(path: &str) -> Result<String, String> {
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => {
                format!("key file {path}: is a symbolic link; give the key file itself")
            }
            _ => format!("key file {path}: {e}"),
        })?;
    let meta = f.metadata().map_err(|e| format!("key file {path}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "key file {path}: not a regular file (a device, FIFO or directory)"
        ));
    }
    // SAFETY: geteuid cannot fail and touches no memory
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(format!(
            "key file {path}: owned by uid {}, not by this daemon's user (uid {me}); \
             `chown` it to the user the daemon runs as",
            meta.uid()
        ));
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(format!(
            "key file {path}: mode {mode:04o} lets group or others read or write it; \
             make it private with `chmod 600 {path}`"
        ));
    }
    if meta.len() > MAX_KEY_FILE_BYTES {
        return Err(format!(
            "key file {path}: {} bytes; a key file holds at most {MAX_KEY_FILE_BYTES}",
            meta.len()
        ));
    }
    check_dir(path)?;
    let mut text = String::new();
    f.take(MAX_KEY_FILE_BYTES)
        .read_to_string(&mut text)
        .map_err(|e| format!("key file {path}: {e}"))?;
    Ok(text)
}

/// Whether every byte of `b` is the same (an all-zero or constant key).
fn constant(b: &[u8]) -> bool {
    b.windows(2).all(|w| w[0] == w[1])
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
    if constant(&key) {
        return Err(format!(
            "key file {path}: {what} is one byte repeated: not a secret (make one with `xco-daemon keygen`)"
        ));
    }
    Ok(key)
}

/// Write a new random master secret to `path` (a new file; `force`: replace a regular file).
pub fn keygen(path: &str, force: bool) -> Result<(), String> {
    let key = random_bytes::<32>()?;
    write_secret(path, &format!("{}\n", hex(&key)), force)
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
                    let b: [u8; 32] = b.try_into().expect("32 bytes");
                    let weak = ed25519_dalek::VerifyingKey::from_bytes(&b)
                        .map(|k| k.is_weak())
                        .unwrap_or(true);
                    if weak || constant(&b) {
                        return Err(format!(
                            "key file {path}: controller_public is not a usable Ed25519 public key \
                             (degenerate or of small order): make the file anew with `xco-daemon agent-key`"
                        ));
                    }
                    public = Some(b);
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
    use std::os::unix::fs::PermissionsExt;

    /// A private directory of the test's own (mode 0700) and a path in it.
    fn private(name: &str) -> (std::path::PathBuf, String) {
        let d = std::env::temp_dir().join(format!("xco-keys-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir(&d).unwrap();
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        let p = d.join("key").to_string_lossy().into_owned();
        (d, p)
    }

    fn mode(p: &str) -> u32 {
        std::fs::metadata(p).unwrap().mode() & 0o777
    }

    #[test]
    fn keygen_writes_a_new_private_file_and_never_overwrites_without_force() {
        let (d, p) = private("master");
        keygen(&p, false).unwrap();
        assert_eq!(mode(&p), 0o600);
        let first = read_master(&p).unwrap();
        assert_eq!(first.len(), 32);
        let e = keygen(&p, false).unwrap_err();
        assert!(e.contains("exists") && e.contains("--force"), "{e}");
        assert_eq!(read_master(&p).unwrap(), first, "the key was not touched");
        // --force: a new file renamed over it, private, another key
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o644)).unwrap();
        keygen(&p, true).unwrap();
        assert_eq!(mode(&p), 0o600);
        assert_ne!(read_master(&p).unwrap(), first);
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn keygen_never_writes_through_a_link_or_onto_a_device_or_fifo() {
        let (d, p) = private("links");
        // a link to a file of someone's: refused, with or without --force; the target is untouched
        let target = d.join("target");
        std::fs::write(&target, "precious\n").unwrap();
        std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::os::unix::fs::symlink(&target, &p).unwrap();
        for force in [false, true] {
            let e = keygen(&p, force).unwrap_err();
            assert!(e.contains("not a regular file"), "{e}");
        }
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious\n");
        assert_eq!(
            mode(target.to_str().unwrap()),
            0o644,
            "the target's mode was not changed"
        );
        // a link to a device, as `keygen /dev/null` through a link would be: untouched
        std::fs::remove_file(&p).unwrap();
        std::os::unix::fs::symlink("/dev/null", &p).unwrap();
        let before = std::fs::metadata("/dev/null").unwrap().mode();
        assert!(keygen(&p, true).is_err());
        assert_eq!(std::fs::metadata("/dev/null").unwrap().mode(), before);
        // a device itself: refused, its mode unchanged
        let before = std::fs::metadata("/dev/null").unwrap().mode();
        let e = keygen("/dev/null", true).unwrap_err();
        assert!(e.contains("not a regular file") || e.contains("directory"), "{e}");
        assert_eq!(std::fs::metadata("/dev/null").unwrap().mode(), before);
        // a FIFO: refused at once (no open, no block)
        std::fs::remove_file(&p).unwrap();
        let c = std::ffi::CString::new(p.clone()).unwrap();
        // SAFETY: a valid C string; mkfifo touches nothing else
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(keygen(&p, true).unwrap_err().contains("not a regular file"));
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn reading_refuses_links_fifos_devices_big_files_and_open_directories_without_blocking() {
        let (d, p) = private("read");
        keygen(&p, false).unwrap();
        assert!(read_master(&p).is_ok());
        // a link to a good key file: refused (give the file itself)
        let link = d.join("link").to_string_lossy().into_owned();
        std::os::unix::fs::symlink(&p, &link).unwrap();
        assert!(read_master(&link).unwrap_err().contains("symbolic link"));
        // a FIFO: refused at once, never blocks
        let fifo = d.join("fifo").to_string_lossy().into_owned();
        let c = std::ffi::CString::new(fifo.clone()).unwrap();
        // SAFETY: a valid C string
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(read_master(&fifo).unwrap_err().contains("not a regular file"));
        // a device that never ends
        assert!(read_master("/dev/zero")
            .unwrap_err()
            .contains("not a regular file"));
        // a regular file too big to be a key: refused from its size, not read
        let big = d.join("big").to_string_lossy().into_owned();
        create_new(&big, &"a".repeat(MAX_KEY_FILE_BYTES as usize + 1)).unwrap();
        assert!(read_master(&big).unwrap_err().contains("at most"));
        // modes that let group or others in
        for m in [0o666, 0o640, 0o604, 0o620] {
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(m)).unwrap();
            let e = read_master(&p).unwrap_err();
            assert!(e.contains("chmod 600") && e.contains(&format!("{m:04o}")), "{e}");
        }
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
        // a directory others may write (they could swap the key)
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(read_master(&p).unwrap_err().contains("group or others"));
        assert!(keygen(&d.join("k2").to_string_lossy(), false)
            .unwrap_err()
            .contains("group or others"));
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).unwrap();
        // a file of another user (as root we can make one)
        // SAFETY: geteuid touches no memory
        if unsafe { libc::geteuid() } == 0 {
            std::os::unix::fs::chown(&p, Some(65534), None).unwrap();
            assert!(read_master(&p).unwrap_err().contains("owned by uid 65534"));
        }
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn short_garbled_and_degenerate_keys_are_refused() {
        let (d, p) = private("bad");
        write_secret(&p, "0123456789abcdef\n", true).unwrap();
        assert!(read_master(&p).unwrap_err().contains("64 bits; at least 256"));
        write_secret(
            &p,
            "xyz-not-hex-xyz-not-hex-xyz-not-hex-xyz-not-hex-xyz-not-hex-abcd\n",
            true,
        )
        .unwrap();
        assert!(read_master(&p).unwrap_err().contains("not hexadecimal"));
        write_secret(&p, &format!("{}\n", "00".repeat(32)), true).unwrap();
        assert!(read_master(&p).unwrap_err().contains("one byte repeated"));
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn an_agent_key_file_round_trips_and_is_checked() {
        let (d, p) = private("agent");
        // a real controller public key
        let public = xco_core::wire::ControllerKeys::new(&[5; 32], &[]).public_key();
        let k = AgentKeyFile {
            host: "h7".into(),
            host_key: (0..32).collect(),
            controller_public: public,
        };
        write_secret(&p, &k.render(), true).unwrap();
        assert_eq!(AgentKeyFile::read(&p).unwrap(), k);
        assert!(read_master(&p).unwrap_err().contains("agent key file"));
        write_secret(&p, &k.render().replace("host = h7\n", ""), true).unwrap();
        assert!(AgentKeyFile::read(&p).unwrap_err().contains("no host"));
        let short = AgentKeyFile {
            host_key: (0..16).collect(),
            ..k.clone()
        };
        write_secret(&p, &short.render(), true).unwrap();
        assert!(AgentKeyFile::read(&p).unwrap_err().contains("128 bits"));
        // degenerate controller keys: all zero, and the identity point (small order)
        let mut identity = [0u8; 32];
        identity[0] = 1;
        for bad in [[0u8; 32], identity] {
            let f = AgentKeyFile {
                controller_public: bad,
                ..k.clone()
            };
            write_secret(&p, &f.render(), true).unwrap();
            let e = AgentKeyFile::read(&p).unwrap_err();
            assert!(e.contains("not a usable Ed25519 public key"), "{e}");
        }
        std::fs::remove_dir_all(d).unwrap();
    }
}
