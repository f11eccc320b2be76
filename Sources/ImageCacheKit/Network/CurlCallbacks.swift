import CCurl
#if canImport(Glibc)
import Glibc
#endif

// libcurl's callbacks, as global functions: a `@convention(c)` closure written in a
// main-actor context inherits that isolation and crashes when curl calls it from its own
// thread (FIELD-NOTES). Each receives the transfer through its user pointer (an unretained
// `Unmanaged<TransferJob>`; the engine keeps the job alive while curl holds the handle).

/// CURLOPT_WRITEFUNCTION: body bytes. Returning less than given aborts the transfer.
func curlWriteBody(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    guard let user else { return 0 }
    let job = Unmanaged<TransferJob>.fromOpaque(user).takeUnretainedValue()
    let length = size * count
    return job.receiveBody(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

/// CURLOPT_HEADERFUNCTION: one header line at a time (status lines included).
func curlWriteHeader(_ data: UnsafeMutablePointer<CChar>?, _ size: Int, _ count: Int, _ user: UnsafeMutableRawPointer?) -> Int {
    guard let user else { return 0 }
    let job = Unmanaged<TransferJob>.fromOpaque(user).takeUnretainedValue()
    let length = size * count
    return job.receiveHeader(UnsafeRawBufferPointer(start: data, count: length)) ? length : 0
}

/// CURLOPT_XFERINFOFUNCTION: called at least about once a second even when no byte moves,
/// which is where stalls and the total deadline are caught. Non-zero aborts.
func curlTransferInfo(_ user: UnsafeMutableRawPointer?, _ dlTotal: curl_off_t, _ dlNow: curl_off_t,
                      _ ulTotal: curl_off_t, _ ulNow: curl_off_t) -> Int32 {
    guard let user else { return 1 }
    let job = Unmanaged<TransferJob>.fromOpaque(user).takeUnretainedValue()
    return job.checkTimers() ? 0 : 1
}

/// CURLOPT_OPENSOCKETFUNCTION: the moment the resolved address is known. A refused address
/// gets no socket (curl then reports a connect failure) and the job records why, so the
/// error becomes `forbidden` rather than `network_unavailable`; a socket refused for want of
/// descriptors is recorded too, so it becomes `busy`.
func curlOpenSocket(_ user: UnsafeMutableRawPointer?, _ purpose: curlsocktype,
                    _ address: UnsafeMutablePointer<curl_sockaddr>?) -> curl_socket_t {
    guard let user, let address else { return IC_CURL_SOCKET_BAD }
    let job = Unmanaged<TransferJob>.fromOpaque(user).takeUnretainedValue()
    let family = address.pointee.family
    let raw = UnsafeRawPointer(address) + MemoryLayout<curl_sockaddr>.offset(of: \curl_sockaddr.addr)!
    let ip: IPAddress
    if family == AF_INET {
        var sin = raw.loadUnaligned(as: sockaddr_in.self)
        ip = IPAddress(bytes: withUnsafeBytes(of: &sin.sin_addr) { Array($0) })
    } else if family == AF_INET6 {
        var sin6 = raw.loadUnaligned(as: sockaddr_in6.self)
        ip = IPAddress(bytes: withUnsafeBytes(of: &sin6.sin6_addr) { Array($0) })
    } else {
        job.refuse("address family \(family) is not allowed")
        return IC_CURL_SOCKET_BAD
    }
    if let reason = job.refusal(for: ip) {
        job.refuse(reason)
        return IC_CURL_SOCKET_BAD
    }
    let fd = socket(family, address.pointee.socktype | Int32(SOCK_CLOEXEC.rawValue), address.pointee.protocol)
    if fd < 0 { job.socketFailed(errno: errno) }
    return fd
}
