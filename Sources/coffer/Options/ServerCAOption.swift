import ArgumentParser

/// `--ca FILE`: the one option every `coffer server` command that talks to a server takes for a
/// private CA (``trustingClient(server:ca:)`` reads it, or `COFFER_CA_FILE`).
struct ServerCAOption: ParsableArguments {
    @Option(name: .customLong("ca"), help: ArgumentHelp("Trust only the certificates in this PEM file for the server's TLS (a private CA; default: $COFFER_CA_FILE, else the system's roots).", valueName: "file"))
    var ca: String?
}
