import CofferTestSupport
import CofferTesting
import Foundation
import Testing

/// Runs the built `coffer` binary.
func coffer(
    _ arguments: String...,
    input: [UInt8] = [],
    environment: [String: String]? = nil,
    in folder: TemporaryDirectory? = nil
) throws -> CommandResult {
    try coffer(arguments, input: input, environment: environment, in: folder)
}

/// Runs the built `coffer` binary with an argument array.
func coffer(
    _ arguments: [String],
    input: [UInt8] = [],
    environment: [String: String]? = nil,
    in folder: TemporaryDirectory? = nil
) throws -> CommandResult {
    try CommandRunner.run(
        CommandRunner.cofferExecutable(),
        arguments,
        input: input,
        environment: environment,
        currentDirectory: folder?.path
    )
}

/// Runs another program in `folder`.
func tool(_ name: String, _ arguments: [String], input: [UInt8] = [], in folder: TemporaryDirectory) throws -> CommandResult {
    try CommandRunner.run(name, arguments, input: input, currentDirectory: folder.path)
}

let haveCoreutils = CommandRunner.isAvailable("sha256sum") && CommandRunner.isAvailable("sha512sum")
let haveOpenSSL = CommandRunner.isAvailable("openssl")
