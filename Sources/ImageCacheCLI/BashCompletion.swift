import ArgumentParser

/// The bash script beside the root command, whose whole tree it is generated from; the
/// completions the commands name stay with them.
extension Completions {
    /// The bash completion script, with `download`'s default subcommand understood: the
    /// parser's script completes `download start PHOTO -o DIR` but treats the PHOTO of
    /// `download PHOTO -o …` as an unknown subcommand and offers nothing (not even folders).
    /// Its `download` branch for an unknown word is made to hand over to `start`'s.
    public static func bashScript() -> String {
        let script = ImageCacheRoot.completionScript(for: .bash)
        let unknown = """
                *)
                    # Offer subcommand completions
                    COMPREPLY+=($(compgen -W 'start status list watch cancel' -- "${cur}"))
                    ;;
            """
        let delegating = """
                *)
                    if [[ "${#unparsed_words[@]}" -gt 0 || "${prev}" == -* ]]; then
                        # `download PHOTO...` is `download start PHOTO...`, the default subcommand
                        unparsed_words=("${subcommand}" "${unparsed_words[@]}")
                        _imagecache_download_start
                    else
                        # Offer subcommand completions
                        COMPREPLY+=($(compgen -W 'start status list watch cancel' -- "${cur}"))
                    fi
                    ;;
            """
        return script.replacingOccurrences(of: unknown, with: delegating)
    }

    /// Whether the words ask for the bash script (`--generate-completion-script bash`).
    static func asksForBashScript(_ arguments: [String]) -> Bool {
        arguments == ["--generate-completion-script", "bash"] || arguments == ["--generate-completion-script=bash"]
    }
}
