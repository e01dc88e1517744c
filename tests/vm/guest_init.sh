#!/bin/sh
# PID 1 of the test guest (busybox sh). Mounts the pseudo file systems, loads the CXL/DAX and
# virtio modules, runs the scenario named by hb_scenario= on the kernel command line with /out
# as its working directory, writes /out as a tar onto the results disk (/dev/vda) and powers
# off. The === HB- markers on the console let the host tell a finished scenario from a hang or
# a crash even when the results disk is unreadable.
/bin/busybox --install -s /bin
export PATH=/usr/bin:/usr/sbin:/bin HOME=/tmp
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
scenario=$(sed -n 's/.*hb_scenario=\([^ ]*\).*/\1/p' /proc/cmdline)
echo "=== HB-GUEST-UP uptime $(cut -d' ' -f1 /proc/uptime) s, kernel $(uname -r), scenario $scenario"
# Missing modules are fine here: a scenario checks for the devices it needs and says what is absent.
for m in virtio_pci virtio_blk cxl_acpi cxl_pci cxl_mem cxl_port cxl_pmem nd_pmem dax_pmem device_dax kmem; do
  modprobe -q "$m" 2>/dev/null
done
cd /out
if [ -f "/scenarios/$scenario.sh" ]; then
  (sh "/scenarios/$scenario.sh"; echo $? > /out/exit_status) 2>&1 | tee /out/scenario.log
  rc=$(cat /out/exit_status 2>/dev/null || echo 99)
else
  echo "no scenario '$scenario' in /scenarios: $(ls /scenarios)"
  rc=98
fi
echo "=== HB-SCENARIO-EXIT $rc uptime $(cut -d' ' -f1 /proc/uptime) s"
i=0
while [ ! -b /dev/vda ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
if [ -b /dev/vda ]; then
  tar cf /dev/vda -C /out . && sync && echo "=== HB-RESULTS-WRITTEN"
else
  echo "=== HB-NO-RESULTS-DISK (virtio_blk did not load?)"
fi
poweroff -f
