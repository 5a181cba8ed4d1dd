//go:build linux

package fswatch

import "syscall"

// sysInit opens a non-blocking, close-on-exec inotify instance.
func sysInit() (int, error) {
	for {
		fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
		if err == syscall.EINTR {
			continue
		}
		return fd, err
	}
}

// sysAddWatch adds or extends a watch on path.
func sysAddWatch(fd int, path string, mask uint32) (int32, error) {
	for {
		wd, err := syscall.InotifyAddWatch(fd, path, mask)
		if err == syscall.EINTR {
			continue
		}
		return int32(wd), err
	}
}

// sysRmWatch removes a watch; errors (the watch is already gone) are
// irrelevant to the caller.
func sysRmWatch(fd int, wd int32) {
	for {
		_, err := syscall.InotifyRmWatch(fd, uint32(wd))
		if err != syscall.EINTR {
			return
		}
	}
}

// sysRead reads pending events with a raw read system call (an os.File
// would park the goroutine on EAGAIN). It returns 0, nil when nothing is
// pending.
func sysRead(fd int, buf []byte) (int, error) {
	for {
		n, err := syscall.Read(fd, buf)
		switch err {
		case nil:
			return n, nil
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return 0, nil
		default:
			return 0, err
		}
	}
}

// sysClose closes the inotify descriptor.
func sysClose(fd int) error {
	return syscall.Close(fd)
}

// localFS lists the file systems (statfs f_type) whose changes all pass
// through this kernel, so inotify sees every one of them. Network and FUSE
// file systems (NFS, SMB, 9p, virtiofs, sshfs...) are absent on purpose:
// changes made by another host or by the FUSE server are not reported.
var localFS = map[uint32]bool{
	0xEF53:     true, // ext2, ext3, ext4
	0x58465342: true, // xfs
	0x9123683E: true, // btrfs
	0x01021994: true, // tmpfs
	0x858458F6: true, // ramfs
	0x794C7630: true, // overlayfs
	0x2FC12FC1: true, // zfs
	0xF2F52010: true, // f2fs
	0xCA451A4E: true, // bcachefs
	0x3153464A: true, // jfs
	0x52654973: true, // reiserfs
}

// sysLocalFS reports whether dir lives on a file system in localFS.
func sysLocalFS(dir string) bool {
	var st syscall.Statfs_t
	for {
		err := syscall.Statfs(dir, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		return localFS[uint32(st.Type)] // magic numbers are 32 bits; f_type may be signed
	}
}
