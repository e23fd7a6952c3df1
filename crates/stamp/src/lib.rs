//! The kernel's receive time of socket data (`SO_TIMESTAMPNS`): when the bytes reached this host,
//! not when a busy thread got round to reading them. The measuring client stamps every read with
//! it, so a burst of streams whose tokens land at once (256 first tokens within a millisecond) is
//! timed as it arrived, not in the order the one client thread works through it; the fake server
//! stamps request arrivals with it. Linux only (x86-64 and arm64 share the option's number).

use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// `SO_TIMESTAMPNS` (= `SCM_TIMESTAMPNS`) on Linux x86-64 and arm64.
const SO_TIMESTAMPNS: libc::c_int = 35;

/// Ask the kernel to stamp the data this socket receives with its arrival time. Best effort: a
/// socket that refuses gives reads without a stamp, which fall back to the reader's clock.
pub fn enable(sock: &impl AsRawFd) {
    let one: libc::c_int = 1;
    // SAFETY: a valid socket and a c_int option value of the size passed.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_TIMESTAMPNS,
            (&one as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// `recvmsg` into `buf`: the bytes read and, when the kernel stamped them, their receive time
/// as an [`Instant`]. On TCP one read can take data that arrived in several segments; the stamp
/// is then the latest segment's, which is still no later than the moment of the read.
pub fn recv(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, Option<Instant>)> {
    let mut iov = libc::iovec {
        iov_base: buf.as_mut_ptr().cast(),
        iov_len: buf.len(),
    };
    let mut control = [0u64; 16];
    // SAFETY: msghdr is plain data; every pointer set below outlives the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = size_of_val(&control) as _;
    // SAFETY: fd is an open socket, msg points at live buffers.
    let n = unsafe { libc::recvmsg(fd, &mut msg, 0) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    let mut stamp = None;
    // SAFETY: walking the control messages the kernel wrote into `control`.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == SO_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                stamp = Some(ts);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    let at = stamp.and_then(|ts| {
        let then = UNIX_EPOCH.checked_add(Duration::new(
            u64::try_from(ts.tv_sec).ok()?,
            u32::try_from(ts.tv_nsec).ok()?,
        ))?;
        to_instant(then, SystemTime::now(), Instant::now())
    });
    Ok((n as usize, at))
}

/// Wait until `sock` is readable, then [`recv`] from it.
pub async fn read(
    sock: &tokio::net::TcpStream,
    buf: &mut [u8],
) -> io::Result<(usize, Option<Instant>)> {
    loop {
        sock.readable().await?;
        match sock.try_io(tokio::io::Interest::READABLE, || {
            recv(sock.as_raw_fd(), buf)
        }) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            r => return r,
        }
    }
}

/// The wall-clock time `then` on the monotonic clock, from one reading of both clocks (`real`,
/// `mono`) taken now. `None` for a time in the future (the wall clock was stepped back).
fn to_instant(then: SystemTime, real: SystemTime, mono: Instant) -> Option<Instant> {
    let ago = real.duration_since(then).ok()?;
    mono.checked_sub(ago)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wall_clock_time_maps_back_by_its_age() {
        let (real, mono) = (SystemTime::now(), Instant::now());
        let then = real - Duration::from_micros(1500);
        assert_eq!(
            to_instant(then, real, mono),
            Some(mono - Duration::from_micros(1500))
        );
        // A stamp from the future (the wall clock stepped back since): no stamp.
        assert_eq!(to_instant(real + Duration::from_secs(1), real, mono), None);
    }

    #[test]
    fn loopback_data_carries_a_receive_time_no_later_than_the_read() {
        use std::io::Write;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let mut tx = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (rx, _) = listener.accept().unwrap();
        enable(&rx);
        // The kernel turns receive stamping on for the whole system in deferred work when no
        // socket had it: the first segments after `enable` may arrive unstamped (a read
        // without a stamp falls back to the reader's clock). Within a few tries one is stamped.
        let mut stamped = None;
        for _ in 0..20 {
            let before = Instant::now();
            tx.write_all(b"token").unwrap();
            std::thread::sleep(Duration::from_millis(30));
            let mut buf = [0u8; 16];
            let (n, at) = recv(rx.as_raw_fd(), &mut buf).unwrap();
            let read_at = Instant::now();
            assert_eq!(&buf[..n], b"token");
            if let Some(at) = at {
                stamped = Some((before, at, read_at));
                break;
            }
        }
        let (before, at, read_at) = stamped.expect("the kernel stamps loopback data");
        // Stamped on arrival, ~30 ms before the read; allow for the clocks' reading error.
        assert!(
            at + Duration::from_millis(20) < read_at,
            "{:?}",
            read_at - at
        );
        assert!(at + Duration::from_millis(1) > before, "{:?}", at - before);
    }
}
