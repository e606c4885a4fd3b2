# Offline stand-in for NixOS/nixpkgs, for the flake structure test in `cargo xtask test`
# (see docs/nix-and-ci.md). It provides only what ../../../flake.nix uses, each package a
# trivial derivation, so a renamed or missing attribute in the flake fails evaluation here.
{
  description = "infx offline stub of nixpkgs (structure test only, builds nothing real)";
  outputs =
    { self }:
    {
      lib = import ./lib.nix;
      legacyPackages = self.lib.genAttrs [ "x86_64-linux" "aarch64-linux" ] (
        system: import ./default.nix { inherit system; }
      );
    };
}
