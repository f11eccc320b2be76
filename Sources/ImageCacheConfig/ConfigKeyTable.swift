import Logging

/// How one `cache.conf` key is read into `CacheConfiguration` and written back out.
///
/// Every key of the file lives in this one table: the parser, the rendering in
/// `description`, and the test that the repository's cache.conf names every key all use it,
/// so adding a key here is the whole change (plus its line in cache.conf).
struct ConfigKey {
    /// What the parser needs besides the value: where `~` points, and where the value was.
    struct Context {
        var home: String
        var path: String
        var line: Int
    }

    let section: String
    let name: String
    /// Secrets are never echoed in messages or descriptions.
    let isSecret: Bool
    let apply: (inout CacheConfiguration, ConfigRawValue, Context) throws(ConfigValueProblem) -> Void
    let render: (CacheConfiguration) -> String

    /// `section.name`, as the table and duplicate detection key it.
    var qualifiedName: String { section + "." + name }
}

extension ConfigKey {
    /// Every key, in the order of the repository's cache.conf.
    static var all: [ConfigKey] {
        [
            optionalPath("daemon", "socket", \.daemon.socket, maxBytes: 107),
            optional("daemon", "socket_group", \.daemon.socketGroup, rule: ConfigStringRules.groupName),
            optional("daemon", "admin_group", \.daemon.adminGroup, rule: ConfigStringRules.groupName),
            optionalPath("daemon", "state_dir", \.daemon.stateDir),
            ConfigKey(section: "daemon", name: "log_level", isSecret: false,
                      apply: { c, v, _ throws(ConfigValueProblem) in c.daemon.logLevel = try v.logLevel() },
                      render: { $0.daemon.logLevel.rawValue }),
            size("daemon", "max_request_bytes", \.daemon.maxRequestBytes, atLeast: 1 << 10),
            count("daemon", "max_pending_per_session", \.daemon.maxPendingPerSession, in: 1...1_000_000),
            ConfigKey(section: "daemon", name: "metrics_listen", isSecret: false,
                      apply: { c, v, context throws(ConfigValueProblem) in
                          guard let value = try v.optionalString(), !value.isEmpty else { c.daemon.metricsListen = nil; return }
                          c.daemon.metricsListen = try MetricsListenAddress.parse(value, home: context.home)
                      },
                      render: { $0.daemon.metricsListen.map { ConfigRendering.string($0.description) } ?? "" }),

            optionalPath("cache", "cache_dir", \.cache.cacheDir),
            size("cache", "memory_limit", \.cache.memoryLimit, atLeast: 0),
            size("cache", "disk_limit", \.cache.diskLimit, atLeast: 0),
            count("cache", "thumbnail_size", \.cache.thumbnailSize, in: 16...4096),
            count("cache", "thumbnail_quality", \.cache.thumbnailQuality, in: 1...100),
            duration("cache", "search_ttl", \.cache.searchTTL, atLeast: .zero),
            duration("cache", "path_grace", \.cache.pathGrace, atLeast: .zero),

            count("network", "max_connections", \.network.maxConnections, in: 1...1024),
            count("network", "max_connections_per_host", \.network.maxConnectionsPerHost, in: 1...1024),
            duration("network", "connect_timeout", \.network.connectTimeout, atLeast: .milliseconds(1)),
            duration("network", "stall_timeout", \.network.stallTimeout, atLeast: .milliseconds(1)),
            size("network", "max_image_bytes", \.network.maxImageBytes, atLeast: 1),
            count("network", "max_image_pixels", \.network.maxImagePixels, in: 1...Int.max),
            size("network", "decode_memory", \.network.decodeMemory, atLeast: 16 << 20),
            ConfigKey(section: "network", name: "allowed_hosts", isSecret: false,
                      apply: { c, v, _ throws(ConfigValueProblem) in
                          var hosts: [String] = []
                          for host in try v.list() { hosts.append(try ConfigStringRules.host(host)) }
                          c.network.allowedHosts = hosts
                      },
                      render: { ConfigRendering.list($0.network.allowedHosts) }),
            ConfigKey(section: "network", name: "allow_http", isSecret: false,
                      apply: { c, v, _ throws(ConfigValueProblem) in c.network.allowHTTP = try v.bool() },
                      render: { String($0.network.allowHTTP) }),
            duration("network", "fling_dwell", \.network.flingDwell, atLeast: .zero),
            duration("network", "transfer_timeout", \.network.transferTimeout, atLeast: .milliseconds(1)),
            optional("network", "proxy", \.network.proxy) { value throws(ConfigValueProblem) in
                try ConfigStringRules.url(value, schemes: ["http", "https", "socks4", "socks4a", "socks5", "socks5h"])
            },
            optionalPath("network", "ca_bundle", \.network.caBundle),
            ConfigKey(section: "network", name: "user_agent", isSecret: false,
                      apply: { c, v, _ throws(ConfigValueProblem) in
                          // Empty means the built-in default, so cache.conf need not repeat the version.
                          let value = try v.optionalString() ?? ""
                          c.network.userAgent = value.isEmpty ? CacheConfiguration.Network.defaultUserAgent : value
                      },
                      render: { $0.network.userAgent == CacheConfiguration.Network.defaultUserAgent ? "" : ConfigRendering.string($0.network.userAgent) }),

            ConfigKey(section: "search", name: "default_provider", isSecret: false,
                      apply: { c, v, _ throws(ConfigValueProblem) in
                          let name = try v.requiredString()
                          guard CacheConfiguration.providerNames.contains(name) else {
                              throw .bad(expected: "one of " + CacheConfiguration.providerNames.joined(separator: ", "))
                          }
                          c.search.defaultProvider = name
                      },
                      render: { ConfigRendering.string($0.search.defaultProvider) }),

            ConfigKey(section: "downloads", name: "download_dir", isSecret: false,
                      apply: { c, v, context throws(ConfigValueProblem) in
                          var roots: [String] = []
                          for root in try v.list() { roots.append(try ConfigStringRules.absolutePath(root, home: context.home)) }
                          c.downloads.downloadDir = roots
                      },
                      render: { ConfigRendering.list($0.downloads.downloadDir) }),

            ConfigKey(section: "shared", name: "servers", isSecret: false,
                      apply: { c, v, _ throws(ConfigValueProblem) in
                          var servers: [SharedTierSettings.Server] = []
                          for item in try v.list() {
                              guard let server = SharedTierSettings.Server.parse(item) else {
                                  throw .bad(expected: "memcached servers as host:port, comma-separated ([::1]:11211 for IPv6)")
                              }
                              guard !servers.contains(server) else { throw .bad(expected: "each server once (\(server) is listed twice)") }
                              servers.append(server)
                          }
                          c.shared.servers = servers
                      },
                      render: { ConfigRendering.list($0.shared.servers.map(\.description)) }),
            ConfigKey(section: "shared", name: "timeout", isSecret: false,
                      apply: { c, v, _ throws(ConfigValueProblem) in
                          let value = try v.duration()
                          guard value >= .milliseconds(1), value <= .seconds(10) else {
                              throw .outOfRange(rule: "must be between 1ms and 10s (it is added to a request when a node is slow)")
                          }
                          c.shared.timeout = value
                      },
                      render: { ConfigRendering.duration($0.shared.timeout) }),
            duration("shared", "claim_wait", \.shared.claimWait, atLeast: .milliseconds(1), atMost: .seconds(300)),
            ConfigKey(section: "shared", name: "prefix", isSecret: false,
                      apply: { c, v, _ throws(ConfigValueProblem) in
                          let value = try v.optionalString() ?? ""
                          guard value.utf8.count <= SharedTierSettings.maximumPrefixBytes,
                                value.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7f }) else {
                              throw .bad(expected: "at most \(SharedTierSettings.maximumPrefixBytes) printable ASCII characters, no spaces")
                          }
                          c.shared.prefix = value
                      },
                      render: { ConfigRendering.string($0.shared.prefix) }),
            ConfigKey(section: "shared", name: "share_images", isSecret: false,
                      apply: { c, v, _ throws(ConfigValueProblem) in
                          var names: [String] = []
                          for name in try v.list() {
                              guard SharedTierSettings.shareableSources.contains(name) else {
                                  throw .bad(expected: "names from " + SharedTierSettings.shareableSources.joined(separator: ", "))
                              }
                              if !names.contains(name) { names.append(name) }
                          }
                          c.shared.shareImages = names
                      },
                      render: { ConfigRendering.list($0.shared.shareImages) }),
        ]
            + provider("unsplash", keyName: "access_key", \.unsplash)
            + [unsplashImageFormat()]
            + provider("flickr", keyName: "api_key", \.flickr)
            + provider("pixabay", keyName: "api_key", \.pixabay)
    }

    /// The table by section, then key name.
    static var bySection: [String: [String: ConfigKey]] {
        var table: [String: [String: ConfigKey]] = [:]
        for key in all { table[key.section, default: [:]][key.name] = key }
        return table
    }

    // MARK: Builders, one per kind of value

    private static func size(_ section: String, _ name: String, _ field: WritableKeyPath<CacheConfiguration, Int>,
                             atLeast minimum: Int) -> ConfigKey {
        ConfigKey(section: section, name: name, isSecret: false,
                  apply: { c, v, _ throws(ConfigValueProblem) in
                      let bytes = try v.size()
                      guard bytes >= minimum else { throw .outOfRange(rule: "must be at least " + ConfigRendering.size(minimum)) }
                      c[keyPath: field] = bytes
                  },
                  render: { ConfigRendering.size($0[keyPath: field]) })
    }

    private static func count(_ section: String, _ name: String, _ field: WritableKeyPath<CacheConfiguration, Int>,
                              in range: ClosedRange<Int>) -> ConfigKey {
        ConfigKey(section: section, name: name, isSecret: false,
                  apply: { c, v, _ throws(ConfigValueProblem) in
                      let value = try v.integer()
                      guard range.contains(value) else {
                          throw .outOfRange(rule: range.upperBound == Int.max
                              ? "must be at least \(range.lowerBound)"
                              : "must be between \(range.lowerBound) and \(range.upperBound)")
                      }
                      c[keyPath: field] = value
                  },
                  render: { String($0[keyPath: field]) })
    }

    private static func duration(_ section: String, _ name: String, _ field: WritableKeyPath<CacheConfiguration, Duration>,
                                 atLeast minimum: Duration, atMost maximum: Duration? = nil) -> ConfigKey {
        ConfigKey(section: section, name: name, isSecret: false,
                  apply: { c, v, _ throws(ConfigValueProblem) in
                      let value = try v.duration()
                      guard value >= minimum else {
                          throw .outOfRange(rule: minimum == .milliseconds(1) ? "must be more than 0ms" : "must be at least " + ConfigRendering.duration(minimum))
                      }
                      if let maximum, value > maximum {
                          throw .outOfRange(rule: "must be at most " + ConfigRendering.duration(maximum))
                      }
                      c[keyPath: field] = value
                  },
                  render: { ConfigRendering.duration($0[keyPath: field]) })
    }

    /// A string that may be left empty (meaning: not set, use the contract's default).
    private static func optional(_ section: String, _ name: String, _ field: WritableKeyPath<CacheConfiguration, String?>,
                                 isSecret: Bool = false,
                                 rule: @escaping (String) throws(ConfigValueProblem) -> String = { $0 }) -> ConfigKey {
        ConfigKey(section: section, name: name, isSecret: isSecret,
                  apply: { c, v, _ throws(ConfigValueProblem) in
                      guard let value = try v.optionalString(), !value.isEmpty else { c[keyPath: field] = nil; return }
                      c[keyPath: field] = try rule(value)
                  },
                  render: { c in
                      guard let value = c[keyPath: field] else { return "" }
                      return isSecret ? "\"<redacted>\"" : ConfigRendering.string(value)
                  })
    }

    private static func optionalPath(_ section: String, _ name: String, _ field: WritableKeyPath<CacheConfiguration, String?>,
                                     maxBytes: Int? = nil) -> ConfigKey {
        ConfigKey(section: section, name: name, isSecret: false,
                  apply: { c, v, context throws(ConfigValueProblem) in
                      guard let value = try v.optionalString(), !value.isEmpty else { c[keyPath: field] = nil; return }
                      let path = try ConfigStringRules.absolutePath(value, home: context.home)
                      if let maxBytes, path.utf8.count > maxBytes {
                          throw .outOfRange(rule: "a Unix socket path is at most \(maxBytes) bytes")
                      }
                      c[keyPath: field] = path
                  },
                  render: { $0[keyPath: field].map(ConfigRendering.string) ?? "" })
    }

    /// `[providers.unsplash] image_format`: auto, webp, avif or jpg.
    private static func unsplashImageFormat() -> ConfigKey { ConfigKey(
        section: "providers.unsplash", name: "image_format", isSecret: false,
        apply: { c, v, _ throws(ConfigValueProblem) in
            let text = try v.requiredString()
            guard let format = ProviderImageFormat(rawValue: text) else {
                throw ConfigValueProblem.bad(expected: "auto, webp, avif or jpg")
            }
            c.unsplash.imageFormat = format
        },
        render: { ConfigRendering.string($0.unsplash.imageFormat.rawValue) }) }

    /// A `[providers.NAME]` section: its secret key and its API base URL.
    private static func provider(_ name: String, keyName: String,
                                 _ field: WritableKeyPath<CacheConfiguration, CacheConfiguration.Provider>) -> [ConfigKey] {
        let section = "providers." + name
        return [
            ConfigKey(section: section, name: keyName, isSecret: true,
                      apply: { c, v, context throws(ConfigValueProblem) in
                          guard let value = try v.optionalString(), !value.isEmpty else {
                              c[keyPath: field].apiKey = nil
                              c[keyPath: field].apiKeySource = nil
                              return
                          }
                          c[keyPath: field].apiKey = value
                          c[keyPath: field].apiKeySource = .file(path: context.path, line: context.line)
                      },
                      render: { $0[keyPath: field].apiKey == nil ? "" : "\"<redacted>\"" }),
            ConfigKey(section: section, name: "api_url", isSecret: false,
                      apply: { c, v, _ throws(ConfigValueProblem) in
                          c[keyPath: field].apiURL = try ConfigStringRules.url(try v.requiredString(), schemes: ["http", "https"])
                      },
                      render: { ConfigRendering.string($0[keyPath: field].apiURL) }),
            count(section, "budget", field.appending(path: \.budget), in: 0...100_000_000),
            duration(section, "budget_window", field.appending(path: \.budgetWindow), atLeast: .seconds(1), atMost: .seconds(30 * 24 * 3600)),
        ]
    }
}
