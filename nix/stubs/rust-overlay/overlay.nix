# rust-bin.fromRustupToolchainFile: reads the real rust-toolchain.toml and insists on what the
# flake's checks rely on (a pinned channel; rustfmt and clippy for the fmt and clippy checks).
final: prev: {
  rust-bin.fromRustupToolchainFile =
    file:
    let
      toml = builtins.fromTOML (builtins.readFile file);
      tc = toml.toolchain or (throw "rust-toolchain.toml: no [toolchain] table");
      channel = tc.channel or (throw "rust-toolchain.toml: no toolchain.channel");
      components = tc.components or [ ];
      need = c: builtins.elem c components || throw "rust-toolchain.toml: component ${c} missing (the ${c} check needs it)";
    in
    assert builtins.match "[0-9]+\\.[0-9]+(\\.[0-9]+)?" channel != null
      || throw "rust-toolchain.toml: channel ${channel} is not a pinned version";
    assert need "rustfmt";
    assert need "clippy";
    final.infxStub.stubDrv "rust-${channel}" { };
}
