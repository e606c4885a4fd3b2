# Offline stand-in for ipetkov/crane (structure test only): mkLib and the builders the flake
# calls, with the arguments real crane requires, each returning a trivial derivation.
{
  description = "infx offline stub of crane";
  outputs =
    { self }:
    {
      mkLib = pkgs: import ./lib.nix pkgs;
    };
}
