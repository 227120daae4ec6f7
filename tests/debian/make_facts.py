#!/usr/bin/env python3
"""Build the corpus's three fact sets (facts/*.json) from real facter output.

- debian-12: this machine's `puppet facts show --show-legacy --render-as json`
  (Debian 12, facter 4.3, with the custom facts the installed modules ship:
  apt_*, os_service_default, os_workers...), host specifics scrubbed to
  fixed values.
- redhat-9, ubuntu-22.04: voxpupuli facterdb's facts/4.3/*-x86_64.facts
  (structured facts as facter 4.3 prints them on those systems), plus the
  legacy facts facter derives from them and the module custom facts an
  agent would send after pluginsync, adapted to the platform.

Every set gets the facts an agent adds (clientcert, clientversion,
clientnoop) for the node node1.example.com.

  make_facts.py LOCAL_FACTS.json FACTERDB_REPO_DIR
  (FACTERDB_REPO_DIR: a checkout or bare clone of github.com/voxpupuli/facterdb)
"""

import copy
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
NODE, HOST, DOMAIN = "node1.example.com", "node1", "example.com"
IP, IP6, MAC = "192.0.2.10", "2001:db8::10", "52:54:00:12:34:56"
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def facterdb(repo, name):
    if os.path.isdir(os.path.join(repo, "facts")):
        with open(os.path.join(repo, "facts", "4.3", name)) as f:
            return json.load(f)
    out = subprocess.run(["git", "-C", repo, "show", "HEAD:facts/4.3/" + name],
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def scrub_networking(facts):
    """One interface eth0 with fixed addresses; fixed names."""
    iface = {
        "bindings": [{"address": IP, "netmask": "255.255.255.0", "network": "192.0.2.0"}],
        "bindings6": [{"address": IP6, "netmask": "ffff:ffff:ffff:ffff::", "network": "2001:db8::",
                       "scope6": "global", "flags": ["permanent"]}],
        "ip": IP, "ip6": IP6, "mac": MAC, "mtu": 1500, "netmask": "255.255.255.0",
        "netmask6": "ffff:ffff:ffff:ffff::", "network": "192.0.2.0", "network6": "2001:db8::",
        "scope6": "global",
    }
    lo = {
        "bindings": [{"address": "127.0.0.1", "netmask": "255.0.0.0", "network": "127.0.0.0"}],
        "bindings6": [{"address": "::1", "netmask": "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff",
                       "network": "::1", "scope6": "host", "flags": ["permanent"]}],
        "ip": "127.0.0.1", "ip6": "::1", "mtu": 65536, "netmask": "255.0.0.0",
        "netmask6": "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "network": "127.0.0.0",
        "network6": "::1", "scope6": "host",
    }
    facts["networking"] = {
        "domain": DOMAIN, "fqdn": NODE, "hostname": HOST, "interfaces": {"eth0": iface, "lo": lo},
        "ip": IP, "ip6": IP6, "mac": MAC, "mtu": 1500, "netmask": "255.255.255.0",
        "netmask6": "ffff:ffff:ffff:ffff::", "network": "192.0.2.0", "network6": "2001:db8::",
        "primary": "eth0", "scope6": "global",
    }
    for k in [k for k in facts if k.startswith("scope6_")]:
        del facts[k]


def legacy(facts):
    """The legacy (flat) facts facter 4 derives from the structured ones."""
    os_ = facts["os"]
    net = facts["networking"]
    out = {
        "architecture": os_["architecture"], "hardwaremodel": os_["hardware"],
        "hardwareisa": facts["processors"].get("isa", "unknown"),
        "fqdn": net["fqdn"], "hostname": net["hostname"], "domain": net["domain"],
        "ipaddress": net["ip"], "ipaddress6": net["ip6"], "macaddress": net["mac"],
        "netmask": net["netmask"], "netmask6": net["netmask6"], "network": net["network"],
        "network6": net["network6"], "scope6": net["scope6"],
        "interfaces": ",".join(sorted(net["interfaces"])),
        "operatingsystem": os_["name"], "osfamily": os_["family"],
        "operatingsystemrelease": os_["release"]["full"],
        "operatingsystemmajrelease": os_["release"]["major"],
        "processorcount": facts["processors"]["count"],
        "physicalprocessorcount": facts["processors"]["physicalcount"],
        "memorysize": facts["memory"]["system"]["total"],
        "memoryfree": facts["memory"]["system"]["available"],
        "memorysize_mb": round(facts["memory"]["system"]["total_bytes"] / 1048576.0, 2),
        "memoryfree_mb": round(facts["memory"]["system"]["available_bytes"] / 1048576.0, 2),
        "rubyplatform": facts["ruby"]["platform"], "rubysitedir": facts["ruby"]["sitedir"],
        "rubyversion": facts["ruby"]["version"],
        "selinux": os_.get("selinux", {}).get("enabled", False),
        "augeasversion": facts["augeas"]["version"],
        "blockdevices": ",".join(sorted(facts.get("disks", {}))),
        "gid": facts["identity"]["group"], "id": facts["identity"]["user"],
    }
    if os_["selinux"].get("enabled"):
        for k in ("config_mode", "config_policy", "current_mode", "enforced", "policy_version"):
            if k in os_["selinux"]:
                out["selinux_" + k] = os_["selinux"][k]
    for name, iface in net["interfaces"].items():
        for fact, key in (("ipaddress", "ip"), ("ipaddress6", "ip6"), ("macaddress", "mac"),
                          ("mtu", "mtu"), ("netmask", "netmask"), ("netmask6", "netmask6"),
                          ("network", "network"), ("network6", "network6"), ("scope6", "scope6")):
            if key in iface:
                out["%s_%s" % (fact, name)] = iface[key]
    for i, model in enumerate(facts["processors"]["models"]):
        out["processor%d" % i] = model
    for name, disk in facts.get("disks", {}).items():
        for k in ("model", "size_bytes", "vendor"):
            if k in disk:
                out["blockdevice_%s_%s" % (name, "size" if k == "size_bytes" else k)] = disk[k]
    if "distro" in os_ and os_["family"] == "Debian":
        d = os_["distro"]
        out.update({"lsbdistcodename": d["codename"], "lsbdistdescription": d["description"],
                    "lsbdistid": d["id"], "lsbdistrelease": d["release"]["full"],
                    "lsbmajdistrelease": d["release"]["major"]})
        if "minor" in d["release"]:
            out["lsbminordistrelease"] = d["release"]["minor"]
    for kind in ("rsa", "ecdsa", "ed25519"):
        if kind in facts.get("ssh", {}):
            out["ssh%skey" % kind] = facts["ssh"][kind]["key"]
            fp = facts["ssh"][kind]["fingerprints"]
            out["sshfp_" + kind] = fp["sha1"] + "\n" + fp["sha256"]
    return out


def agent(facts):
    facts.update({"clientcert": NODE, "clientversion": "7.23.0", "clientnoop": False})
    facts["path"] = PATH
    facts["puppetversion"] = "7.23.0"
    facts.pop("aio_agent_version", None)
    facts.pop("gem_version", None)
    return dict(sorted(facts.items()))


def debian(local, db):
    """This machine's facts with host specifics replaced by fixed values."""
    f = copy.deepcopy(local.get("values", local))
    scrub_networking(f)
    for k in [k for k in f if k.split("_")[0] in ("ipaddress", "ipaddress6", "macaddress", "mtu",
                                                 "netmask", "netmask6", "network", "network6")]:
        del f[k]
    for k in [k for k in f if k.startswith(("processor", "blockdevice_", "pci_address_"))]:
        del f[k]
    f["ssh"] = db["ssh"]                       # fixed, well-known test keys
    f["disks"] = {"vda": {"size": "20.00 GiB", "size_bytes": 21474836480, "type": "hdd", "vendor": "0x1af4"}}
    f["memory"] = db["memory"]
    f["load_averages"] = {"15m": 0.05, "1m": 0.1, "5m": 0.08}
    f["kernelrelease"], f["kernelversion"], f["kernelmajversion"] = "6.1.0-18-amd64", "6.1.0", "6.1"
    f["processors"] = db["processors"]
    f["dmi"] = db["dmi"]
    f["is_virtual"], f["virtual"], f["hypervisors"] = True, "kvm", {"kvm": {}}
    f["mountpoints"], f["partitions"] = db["mountpoints"], db["partitions"]
    f["filesystems"] = "ext2,ext3,ext4,vfat"
    f["system_uptime"] = {"days": 0, "hours": 1, "seconds": 3600, "uptime": "1:00 hours"}
    f["systemd"], f["service_provider"] = True, "systemd"   # a real Debian 12 runs systemd
    f["python_dir"] = "/usr/lib/python3/dist-packages"
    f["apt_package_updates"] = f["apt_package_dist_updates"] = ["bash", "openssl"]
    f["apt_package_security_updates"] = f["apt_package_security_dist_updates"] = ["openssl"]
    f["apt_updates"] = f["apt_dist_updates"] = 2
    f["apt_security_updates"] = f["apt_security_dist_updates"] = 1
    f["dhcp_servers"] = {"system": ""}
    f["oci_etc_hosts_content"] = "127.0.0.1 localhost\n%s %s %s\n" % (IP, NODE, HOST)
    f.update(legacy(f))
    f["blockdevices"] = "vda"
    return agent(f)


def custom(base, os_family):
    """The module custom facts (pluginsync) from the Debian set, per platform."""
    keep = ("is_pe", "mysql_server_id", "oci_role", "oci_ssh_host_key_certs_list", "os_service_default",
            "os_workers", "os_workers_heat_engine", "os_workers_keystone", "os_workers_large",
            "os_workers_small", "puppet_environmentpath", "puppet_server", "puppet_vardir", "root_home",
            "staging_http_get", "swift_commented_fstab_entries", "swift_device_uuids", "systemd",
            "filebeat_version", "sssd_services", "ssh_client_version_full", "ssh_client_version_major",
            "ssh_client_version_release", "ssh_server_version_full", "ssh_server_version_major",
            "ssh_server_version_release", "dhcp_servers", "oci_etc_hosts_content")
    out = {k: base[k] for k in keep if k in base}
    out["service_provider"] = "systemd"
    if os_family == "Debian":
        for k, v in base.items():
            if k.startswith("apt_"):
                out[k] = v
        out["package_provider"] = "apt"
        out["python_dir"] = "/usr/lib/python3/dist-packages"
    else:
        out["package_provider"] = "dnf"
        out["python_dir"] = "/usr/lib/python3.9/site-packages"
    return out


def other(db, base):
    f = copy.deepcopy(db)
    scrub_networking(f)
    f["dmi"]["product"]["uuid"] = "00000000-0000-0000-0000-000000000001"
    f.update(legacy(f))
    f.update(custom(base, f["os"]["family"]))
    return agent(f)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as fh:
        local = json.load(fh)
    repo = sys.argv[2]
    deb = debian(local, facterdb(repo, "debian-12-x86_64.facts"))
    sets = {
        "debian-12": deb,
        "redhat-9": other(facterdb(repo, "redhat-9-x86_64.facts"), deb),
        "ubuntu-22.04": other(facterdb(repo, "ubuntu-22.04-x86_64.facts"), deb),
    }
    os.makedirs(os.path.join(HERE, "facts"), exist_ok=True)
    for name, facts in sets.items():
        with open(os.path.join(HERE, "facts", name + ".json"), "w") as fh:
            json.dump(facts, fh, indent=1, sort_keys=True)
            fh.write("\n")
        print("facts/%s.json: %d facts" % (name, len(facts)))


if __name__ == "__main__":
    main()
