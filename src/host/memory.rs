//! The host machine's memory, for runs that refuse to start what cannot fit (the simulator
//! keeps every byte of DRAM data a run writes in host memory).

use std::path::Path;

/// The host memory available now, if known: Linux's `MemAvailable` from `/proc/meminfo`, or
/// less when the process's control group allows less (a container's limit: past it the process
/// is killed, whatever the machine has free). `None` elsewhere or when nothing can be read, and
/// a check then lets the run go.
pub fn available() -> Option<u64> {
    let machine = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|info| {
            let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(kib * 1024)
        });
    let group = std::fs::read_to_string("/proc/self/cgroup")
        .ok()
        .and_then(|groups| cgroup_room(Path::new("/sys/fs/cgroup"), &groups));
    match (machine, group) {
        (Some(m), Some(g)) => Some(m.min(g)),
        (m, g) => m.or(g),
    }
}

/// What the memory controller of the control groups `groups` (`/proc/self/cgroup`'s text)
/// still allows under `root` (`/sys/fs/cgroup`): the least, over the process's group and every
/// group above it, of its limit less what it uses (cgroup v2's `memory.max` and
/// `memory.current`, v1's `memory.limit_in_bytes` and `memory.usage_in_bytes`), less the page
/// cache the kernel can take back (`memory.stat`'s `inactive_file`, v1's
/// `total_inactive_file`), as kubelet counts a container's working set. A group's path that is
/// not under `root` (a container that sees its own group mounted at the root while
/// `/proc/self/cgroup` names it from the host) is read at the mount's root. `None` without a
/// limit anywhere (v2's `max`) or a file to read.
fn cgroup_room(root: &Path, groups: &str) -> Option<u64> {
    for line in groups.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (mount, files) = if controllers.is_empty() {
            (
                root.to_path_buf(),
                ["memory.max", "memory.current", "inactive_file"],
            )
        } else if controllers.split(',').any(|c| c == "memory") {
            (
                root.join("memory"),
                [
                    "memory.limit_in_bytes",
                    "memory.usage_in_bytes",
                    "total_inactive_file",
                ],
            )
        } else {
            continue;
        };
        let [limit, usage, cache] = files;
        let room_of = |dir: &Path| -> Option<u64> {
            let read = |file: &str| -> Option<u64> {
                std::fs::read_to_string(dir.join(file))
                    .ok()?
                    .trim()
                    .parse()
                    .ok()
            };
            let limit = read(limit)?;
            let stat = std::fs::read_to_string(dir.join("memory.stat")).unwrap_or_default();
            let reclaimable = stat
                .lines()
                .find_map(|l| l.strip_prefix(cache)?.trim().parse::<u64>().ok())
                .unwrap_or(0);
            let used = read(usage)?.saturating_sub(reclaimable);
            Some(limit.saturating_sub(used))
        };
        let own = mount.join(path.trim_start_matches('/'));
        let start = if own.is_dir() { own } else { mount.clone() };
        // The group and each above it, up to the mount's root.
        let room = start
            .ancestors()
            .take_while(|d| d.starts_with(&mount))
            .filter_map(room_of)
            .min();
        if room.is_some() {
            return room;
        }
    }
    None
}

/// `bytes` in GiB, for messages.
pub fn gib(bytes: u64) -> f64 {
    bytes as f64 / (1u64 << 30) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A control group's limit, v2 and v1, from files laid out as the kernel lays them out.
    #[test]
    fn a_control_group_s_limit_is_its_room() {
        let root = std::env::temp_dir().join(format!("komorebi-cgroup-{}", std::process::id()));
        let write = |dir: &Path, file: &str, text: &str| {
            std::fs::create_dir_all(dir).unwrap();
            std::fs::write(dir.join(file), text).unwrap();
        };
        // v2: 8 GiB allowed, 3 GiB used.
        let v2 = root.join("user.slice/run.scope");
        write(&v2, "memory.max", "8589934592\n");
        write(&v2, "memory.current", "3221225472\n");
        assert_eq!(
            cgroup_room(&root, "0::/user.slice/run.scope\n"),
            Some(5 << 30)
        );
        // No limit: no room to report.
        write(&v2, "memory.max", "max\n");
        assert_eq!(cgroup_room(&root, "0::/user.slice/run.scope\n"), None);
        // v1: the memory controller's line, among others.
        let v1 = root.join("memory/docker/abc");
        write(&v1, "memory.limit_in_bytes", "2147483648\n");
        write(&v1, "memory.usage_in_bytes", "1073741824\n");
        let groups = "9:name=systemd:/\n4:memory:/docker/abc\n1:cpu:/\n";
        assert_eq!(cgroup_room(&root, groups), Some(1 << 30));
        // A container that sees its own group at the mount's root while /proc/self/cgroup names
        // it from the host: read at the root.
        assert_eq!(cgroup_room(&root, "4:memory:/elsewhere\n"), None);
        write(
            &root.join("memory"),
            "memory.limit_in_bytes",
            "4294967296\n",
        );
        write(
            &root.join("memory"),
            "memory.usage_in_bytes",
            "1073741824\n",
        );
        assert_eq!(cgroup_room(&root, "4:memory:/elsewhere\n"), Some(3 << 30));
        // A parent's limit binds a group that has none of its own, and the page cache the
        // kernel can take back is not counted as used.
        write(&v2, "memory.current", "1073741824\n");
        write(&root.join("user.slice"), "memory.max", "2147483648\n");
        write(&root.join("user.slice"), "memory.current", "1610612736\n");
        assert_eq!(
            cgroup_room(&root, "0::/user.slice/run.scope\n"),
            Some(512 << 20)
        );
        write(
            &root.join("user.slice"),
            "memory.stat",
            "anon 1\ninactive_file 536870912\n",
        );
        assert_eq!(
            cgroup_room(&root, "0::/user.slice/run.scope\n"),
            Some(1 << 30)
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
