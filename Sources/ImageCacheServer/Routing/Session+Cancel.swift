import ImageCacheKit

extension Session {
    /// Cancels the session's pending request `id` (the `cancel` method): its task is cancelled
    /// and it answers 1007 (`reason: "cancelled"`) at once, through `Answer` like every other
    /// answer. It is counted when its task ends (`RequestContext.settle`). Returns false when no
    /// such request is pending.
    @discardableResult
    public func cancel(id: RequestID) -> Bool {
        guard withdraw(id: id) else { return false }
        send(Answer.refusal(Cancellation.request).line(id))
        logger.debug("request cancelled", metadata: ["request": "\(id)"])
        return true
    }
}
