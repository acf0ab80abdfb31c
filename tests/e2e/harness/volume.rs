//! Small file systems of the test's own, mounted on temporary directories, for the SQLite
//! faults: a tmpfs to fill up, and an ext4 image on a loop device that the kernel can be made
//! to turn read-only under a running server, as it does after a disk error
//! (`errors=remount-ro`). [`Volume`] unmounts when dropped, also when the test fails.
//!
//! Mounting needs root. CI runs as root; elsewhere these tests fail, saying so, rather than
//! pass without running.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A mounted file system.
pub struct Volume {
    /// The mount point.
    dir: tempfile::TempDir,
    /// The ext4 image (in a directory of its own, on the ordinary disk).
    image: Option<(tempfile::TempDir, PathBuf)>,
}

impl Volume {
    /// A tmpfs of `size` (as `mount -o size=` takes it: `8m`).
    pub fn tmpfs(size: &str) -> Volume {
        require_root();
        let dir = tempfile::tempdir().expect("tempdir");
        run(
            Command::new("mount")
                .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
                .arg(dir.path()),
            "mount a tmpfs",
        );
        Volume { dir, image: None }
    }

    /// An ext4 file system of `megabytes` on a loop device, mounted `errors=remount-ro`.
    pub fn ext4(megabytes: u32) -> Volume {
        require_root();
        let holder = tempfile::tempdir().expect("tempdir");
        let image = holder.path().join("volume.img");
        std::fs::File::create(&image)
            .and_then(|f| f.set_len(u64::from(megabytes) << 20))
            .expect("create the image file");
        run(
            Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&image),
            "mkfs.ext4 (e2fsprogs)",
        );
        let dir = tempfile::tempdir().expect("tempdir");
        let volume = Volume {
            dir,
            image: Some((holder, image)),
        };
        volume.mount_image();
        volume
    }

    /// The mount point.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// Fills the file system: writes a file until the kernel says it is full (ENOSPC).
    /// Returns the file, to delete when space should come back.
    pub fn fill(&self) -> PathBuf {
        use std::io::Write;
        let filler = self.path().join("filler");
        let mut f = std::fs::File::create(&filler).expect("create the filler");
        let chunk = vec![0xa5u8; 64 * 1024];
        loop {
            match f.write_all(&chunk) {
                Ok(()) => {}
                Err(e) if e.raw_os_error() == Some(28) => break, // ENOSPC
                Err(e) => panic!("filling the volume: {e}"),
            }
        }
        // The last partial chunk's bytes may sit in a page cache page that tmpfs already
        // counted; anything else that fits, one page at a time.
        let page = vec![0x5au8; 4096];
        while f.write_all(&page).is_ok() {}
        let _ = f.sync_all();
        filler
    }

    /// What the kernel does to an ext4 file system after a disk error when it is mounted
    /// `errors=remount-ro`: from now on every write to it fails (EROFS), files already open
    /// included; reads go on. Only unmounting, `e2fsck` and mounting again ([`Volume::repair`])
    /// make it writable again. `just_before` runs immediately before the error: what was
    /// durable then stays; a commit in flight at that moment may be acknowledged by the
    /// kernel and lost all the same (as after a power cut).
    pub fn turn_read_only(&self, just_before: impl FnOnce()) {
        let source = output(
            Command::new("findmnt")
                .args(["-n", "-o", "SOURCE"])
                .arg(self.path()),
            "findmnt",
        );
        let device = Path::new(source.trim())
            .file_name()
            .and_then(|n| n.to_str())
            .expect("the loop device's name")
            .to_string();
        let trigger = format!("/sys/fs/ext4/{device}/trigger_fs_error");
        just_before();
        std::fs::write(&trigger, "verdict test: a disk error")
            .unwrap_or_else(|e| panic!("cannot write {trigger}: {e}"));
        let options = output(
            Command::new("findmnt")
                .args(["-n", "-o", "OPTIONS"])
                .arg(self.path()),
            "findmnt",
        );
        assert!(
            options.contains("emergency_ro") || options.split(',').any(|o| o == "ro"),
            "the file system should be read-only now: {options}"
        );
    }

    /// Unmounts (nothing may hold a file open on it), checks and repairs the file system
    /// with `e2fsck -fy`, and mounts it again read-write. Returns e2fsck's report.
    pub fn repair(&self) -> String {
        let (_, image) = self.image.as_ref().expect("an ext4 volume");
        run(Command::new("umount").arg(self.path()), "umount");
        let out = Command::new("e2fsck")
            .arg("-fy")
            .arg(image)
            .output()
            .expect("run e2fsck");
        // 0: clean, 1: errors corrected; anything else is a file system it could not mend.
        let report = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            matches!(out.status.code(), Some(0 | 1)),
            "e2fsck could not repair the volume ({}):\n{report}",
            out.status
        );
        self.mount_image();
        report
    }

    fn mount_image(&self) {
        let (_, image) = self.image.as_ref().expect("an ext4 volume");
        run(
            Command::new("mount")
                .args(["-o", "loop,errors=remount-ro"])
                .arg(image)
                .arg(self.path()),
            "mount the ext4 image on a loop device",
        );
    }
}

/// Unmounts; lazily when something still holds it (a server that is still exiting), so
/// the mount never outlives the test. A loop device mounted with `-o loop` is freed with it.
impl Drop for Volume {
    fn drop(&mut self) {
        let quiet = |c: &mut Command| {
            c.stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        };
        if !quiet(Command::new("umount").arg(self.dir.path())) {
            quiet(Command::new("umount").arg("-l").arg(self.dir.path()));
        }
    }
}

/// Panics, saying why, unless this process is root.
fn require_root() {
    let uid = output(Command::new("id").arg("-u"), "id -u");
    assert_eq!(
        uid.trim(),
        "0",
        "this test mounts file systems (tmpfs, an ext4 image on a loop device) and must run \
         as root, as CI does; it cannot pass without running"
    );
}

fn output(cmd: &mut Command, what: &str) -> String {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{what}: cannot run: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn run(cmd: &mut Command, what: &str) {
    output(cmd, what);
}
