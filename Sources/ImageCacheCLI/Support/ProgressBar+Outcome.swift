import ImageCacheProtocol

extension ProgressBar {
    /// The word a bar ends with for a failure: `cancelled`, `recycled` (a thumbnail whose
    /// slot was reused), else `failed: kind`. Beside the commands' errors rather than in the
    /// drawing, which knows nothing of where a failure came from.
    public static func outcome(of error: any Error) -> String {
        if error is Interrupted || error is CancellationError { return "cancelled" }
        guard let rpc = error as? RPCError else { return "failed" }
        if rpc.kind == .cancelled { return rpc.data.reason == "recycled" ? "recycled" : "cancelled" }
        return "failed: \(rpc.kind.rawValue)"
    }
}
