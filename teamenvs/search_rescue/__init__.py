"""Search and rescue (ASIST / VIRT-LAB): a medic, an engineer and transporters evacuate victims from a building."""
