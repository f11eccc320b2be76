/// The photo registry's persistence with the fleet's shared tier behind the local one: an id
/// this host never returned resolves from the record the host that returned it wrote to the
/// tier (`SharedSearchRecords`), so `photo.get`, thumbnails, `layout` and downloads work on
/// every host for every id the fleet handed out.
///
/// Lookup order: the registry's memory, then `local` (the disk), then the tier (a search's
/// record, else a `photo.get` answer); a record found in the tier is kept in `local`. Saving
/// writes `local` only: the records that come from a provider are written to the tier where
/// they are fetched (`SearchCoordinator`), so a record one host read from the tier is not
/// written back by every host that reads it.
package struct SharedPhotoPersistence: PhotoPersisting {
    /// The host's own persistence (the disk cache in the daemon).
    package let local: any PhotoPersisting
    /// The tier's records.
    package let shared: SharedSearchRecords

    /// Records in `local`, then in `shared`.
    public init(local: any PhotoPersisting, shared: SharedSearchRecords) {
        self.local = local
        self.shared = shared
    }

    /// Saves to the local persistence only (see the type's note).
    public func save(_ photos: [ProviderPhoto]) async {
        await local.save(photos)
    }

    /// The local record, else the tier's (kept locally once found); nil when neither has one.
    public func load(id: String) async -> ProviderPhoto? {
        if let photo = await local.load(id: id) { return photo }
        let found: ProviderPhoto?
        if let photo = await shared.photo(id: id) {
            found = photo
        } else {
            found = await shared.details(id: id)
        }
        guard let found else { return nil }
        await local.save([found])
        return found
    }
}
