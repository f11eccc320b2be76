/// The long help of `imagecached --help`, written like a man page: what the daemon does,
/// where its configuration comes from, its environment, signals, files and examples.
/// Lines stay under 80 columns so the argument parser prints them as written.
enum DaemonHelp {
    static let discussion = """
        imagecached runs in the foreground as one long-lived process. It searches
        Unsplash, Flickr and Pixabay, downloads images, and keeps a thumbnail cache
        (memory and disk) shared by every client that connects to its Unix socket.
        Clients speak JSON-RPC 2.0, one JSON object per line; the companion CLI
        `imagecache` is one such client. Logs go to stderr, one line per event.

        CONFIGURATION
          The first of these files that exists is read; with none, the built-in
          defaults apply (the repository's cache.conf documents every key):
            1. --config FILE (which must exist)
            2. $XDG_CONFIG_HOME/imagecached/cache.conf
               (~/.config/imagecached/cache.conf when XDG_CONFIG_HOME is unset)
            3. /etc/imagecached/cache.conf
          The file is checked strictly: an unknown section or key, a duplicate,
          or a bad value stops start-up with "FILE:LINE: message" and exit
          status 78. So does a place or a name it gives that cannot be used:
          cache_dir or a download root that is not a writable folder (nor
          creatable under one), or that lies on /proc, /sys or /dev; an
          unreadable ca_bundle; a socket folder the daemon cannot create files
          in; a socket_group that does not exist; a metrics_listen address
          that cannot be bound. --check-config runs every one of these checks,
          as this user, and changes nothing (the units run it before starting
          and reloading).

        ENVIRONMENT
          UNSPLASH_ACCESS_KEY, FLICKR_API_KEY, PIXABAY_API_KEY
              API keys. They win over $CREDENTIALS_DIRECTORY/<same name> (systemd
              LoadCredential=), which wins over the key in cache.conf.
          XDG_RUNTIME_DIR   default socket: $XDG_RUNTIME_DIR/imagecached.sock
                            (/run/imagecached/imagecached.sock when unset)
          CACHE_DIRECTORY   default cache_dir under systemd (CacheDirectory=)
          XDG_CACHE_HOME    default cache_dir otherwise:
                            $XDG_CACHE_HOME/imagecached
                            (~/.cache/imagecached when unset)
          XDG_DOWNLOAD_DIR  default download root (~/Downloads when unset)
          XDG_CONFIG_HOME   where the user's cache.conf is looked up
          STATE_DIRECTORY   default state_dir under systemd (StateDirectory=)
          XDG_STATE_HOME    default state_dir otherwise:
                            $XDG_STATE_HOME/imagecached
                            (~/.local/state/imagecached when unset)
          Proxy variables (http_proxy, ...) are ignored: set proxy = in
          cache.conf.

        SIGNALS
          SIGTERM, SIGINT  finish in-flight writes, then exit 0 (so does the end
                           of stdin, with --watch-stdin).
          SIGHUP           re-read the configuration (limits, keys, log level,
                           [network]); the log names the file and the keys that
                           changed; a bad file is reported and the running
                           configuration kept.

        FILES
          /etc/imagecached/cache.conf        system-wide configuration
          ~/.config/imagecached/cache.conf   per-user configuration
          ~/.cache/imagecached/              thumbnails, search pages, index
          ~/.cache/imagecached/index.sqlite  the index; anything but a file
                                             there is moved aside to
                                             index.sqlite.in-the-way.<time>
                                             and the index rebuilt
          ~/.local/state/imagecached/        download job tables, one per
                                             cache_dir (jobs-<digits>.json),
                                             each locked by its daemon

        EXIT STATUS
          0 on a clean stop or a valid --check-config; 78 on a configuration
          error (in the file or in a place it names; systemd does not restart
          on it), and when something that is not a file stands at the cache
          index's path and cannot be moved aside (the message names it:
          remove it); 1 on any other failure (a socket, a cache_dir or its
          download job table already in use by another daemon).

        EXAMPLES
          Check a configuration file before installing it:
            imagecached --config ./cache.conf --check-config
          Run as a user daemon with verbose logs:
            imagecached --log-level debug
          Run on a private socket with a key from the environment:
            UNSPLASH_ACCESS_KEY=... imagecached --socket /tmp/ic.sock
        """
}
