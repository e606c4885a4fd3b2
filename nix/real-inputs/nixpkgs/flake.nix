# Stand-in for NixOS/nixpkgs in the real-input evaluation of `cargo xtask test`
# (docs/nix-and-ci.md): laid out like nixpkgs, with the REAL nixpkgs lib copied into ./lib at
# test time (from nix-community/nixpkgs.lib) and only the package set stubbed (./default.nix).
{
  description = "infx: real nixpkgs lib, stub package set (evaluation only, builds nothing real)";
  outputs =
    { self }:
    {
      lib = import ./lib;
      legacyPackages = self.lib.genAttrs self.lib.systems.flakeExposed (
        system: import ./default.nix { inherit system; }
      );
    };
}
