extension CacheConfiguration {
    /// The keys (`section.name`, in the file's order) whose effective value differs from
    /// `previous`, so a reload's log line says what it changed rather than only that it
    /// happened. A secret is compared by value and named, never shown.
    package func changedKeys(from previous: CacheConfiguration) -> [String] {
        let secrets: [String: KeyPath<CacheConfiguration, Provider>] = [
            "providers.unsplash": \.unsplash, "providers.flickr": \.flickr, "providers.pixabay": \.pixabay,
        ]
        return ConfigKey.all.compactMap { key in
            let differs: Bool
            if key.isSecret, let provider = secrets[key.section] {
                differs = self[keyPath: provider].apiKey != previous[keyPath: provider].apiKey
            } else {
                differs = key.render(self) != key.render(previous)
            }
            return differs ? key.qualifiedName : nil
        }
    }
}
