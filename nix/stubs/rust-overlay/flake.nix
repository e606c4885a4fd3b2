# Offline stand-in for oxalica/rust-overlay (structure test only). Declares a nixpkgs input like
# the real one, so the root flake's `follows` is exercised.
{
  description = "infx offline stub of rust-overlay";
  inputs.nixpkgs.url = "github:NixOS/nixpkgs/nixpkgs-unstable";
  outputs =
    { self, nixpkgs }:
    {
      overlays.default = import ./overlay.nix;
    };
}
