/// One typed method per contract method, so the CLI and other clients never spell a method
/// name or build params by hand. Each returns the method's result type as the daemon sent it.
extension ImageCacheConnection {
    /// `hello`: the daemon's name, version, protocol revision and configured providers.
    public func hello() async throws -> HelloResult {
        try await call(Methods.Hello.self, NoParams())
    }

    /// `search`: one page of photos.
    public func search(_ params: SearchParams) async throws -> SearchResult {
        try await call(Methods.Search.self, params)
    }

    /// `search` for a query, with the contract's defaults for everything not named.
    public func search(_ query: String, provider: String? = nil, page: Int = 1, perPage: Int? = nil) async throws -> SearchResult {
        try await search(SearchParams(query: query, provider: provider, page: page, perPage: perPage))
    }

    /// `photo.get`: one photo with its detail fields.
    public func photo(_ id: String) async throws -> Photo {
        try await call(Methods.PhotoGet.self, PhotoGetParams(photo: id))
    }

    /// `thumbnail.show`: answers when the slot's thumbnail is on disk; watch `notifications()`
    /// for its progress and dimensions meanwhile. Cancelling the task recycles nothing: call
    /// `recycleThumbnail` for a slot that scrolled away (the task cancellation cancels only
    /// this request).
    public func showThumbnail(_ params: ThumbnailShowParams) async throws -> ThumbnailShowResult {
        try await call(Methods.ThumbnailShow.self, params)
    }

    /// `thumbnail.recycle`: the slot scrolled away; its pending request answers 1007.
    public func recycleThumbnail(slot: Int, view: String = SlotView.main) async throws -> CancelledResult {
        try await call(Methods.ThumbnailRecycle.self, ThumbnailRecycleParams(slot: slot, view: view))
    }

    /// `prefetch`: warms the caches in the background; `prefetch.finished` reports each item.
    public func prefetch(_ params: PrefetchParams) async throws -> PrefetchResult {
        try await call(Methods.Prefetch.self, params)
    }

    /// `prefetch.cancel`: withdraws queued prefetches (all of them with empty params).
    public func cancelPrefetch(_ params: PrefetchCancelParams = PrefetchCancelParams()) async throws -> PrefetchCancelResult {
        try await call(Methods.PrefetchCancel.self, params)
    }

    /// `download`: starts a job and answers its id at once; the job outlives this connection.
    public func download(_ params: DownloadParams) async throws -> DownloadResult {
        try await call(Methods.Download.self, params)
    }

    /// `download.status`: one job's state.
    public func downloadStatus(job: String) async throws -> DownloadJob {
        try await call(Methods.DownloadStatus.self, DownloadJobParams(job: job))
    }

    /// `download.list`: every job the daemon knows.
    public func downloads() async throws -> DownloadListResult {
        try await call(Methods.DownloadList.self, NoParams())
    }

    /// `download.cancel`: stops a job and removes its partial file.
    public func cancelDownload(job: String) async throws -> CancelledResult {
        try await call(Methods.DownloadCancel.self, DownloadJobParams(job: job))
    }

    /// `download.watch`: this session receives the job's notifications from now on; answers
    /// its state now.
    public func watchDownload(job: String) async throws -> DownloadJob {
        try await call(Methods.DownloadWatch.self, DownloadJobParams(job: job))
    }

    /// `layout`: masonry frames from the dimensions the daemon knows.
    public func layout(_ params: LayoutParams) async throws -> LayoutResult {
        try await call(Methods.Layout.self, params)
    }

    /// `stats`: the daemon's counters.
    public func stats() async throws -> StatsResult {
        try await call(Methods.Stats.self, NoParams())
    }

    /// `cache.evict`: removes one image's entries.
    public func evict(_ image: ImageReference) async throws -> CacheRemovalResult {
        try await call(Methods.CacheEvict.self, CacheEvictParams(image: image))
    }

    /// `cache.clear`: empties a part of the cache.
    public func clearCache(_ what: CacheClearTarget) async throws -> CacheRemovalResult {
        try await call(Methods.CacheClear.self, CacheClearParams(what: what))
    }

    /// `cancel`: cancels a request of this session by its id. Rarely needed: cancelling the
    /// task of a call does this by itself.
    public func cancel(requestID: RequestID) async throws -> CancelledResult {
        try await call(Methods.Cancel.self, CancelParams(id: requestID))
    }
}
