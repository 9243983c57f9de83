# written by build/report data; strings from the data are single-quoted (gp_quote)
run = 'results/h200/hopper-shapes/20261202T000042Z.csv'
run_id = '20261202T000042Z'
gpu = 'h200'
gpu_name = 'NVIDIA H200'
mode = 'cold'
grid_shape = 'batch = tokens / S (per panel), heads per panel, bf16'
grid_note = 'batch = tokens / S (per panel), heads per panel, bf16, cold mode'
npanels = 18
array panel_file[18] = ['plots/h200/hopper-shapes/data/panel_H32_KV32_D64_full.dat', 'plots/h200/hopper-shapes/data/panel_H16_KV16_D64_causal.dat', 'plots/h200/hopper-shapes/data/panel_H32_KV32_D64_causal.dat', 'plots/h200/hopper-shapes/data/panel_H16_KV16_D96_full.dat', 'plots/h200/hopper-shapes/data/panel_H16_KV16_D96_causal.dat', 'plots/h200/hopper-shapes/data/panel_H16_KV16_D128_full.dat', 'plots/h200/hopper-shapes/data/panel_H64_KV8_D128_full.dat', 'plots/h200/hopper-shapes/data/panel_H16_KV16_D128_causal.dat', 'plots/h200/hopper-shapes/data/panel_H16_KV1_D128_causal.dat', 'plots/h200/hopper-shapes/data/panel_H32_KV8_D128_causal.dat', 'plots/h200/hopper-shapes/data/panel_H32_KV8_D128_causal_varlen-uniform-0.dat', 'plots/h200/hopper-shapes/data/panel_H64_KV8_D128_causal.dat', 'plots/h200/hopper-shapes/data/panel_H16_KV16_D192_full.dat', 'plots/h200/hopper-shapes/data/panel_H16_KV16_D192_causal.dat', 'plots/h200/hopper-shapes/data/panel_H16_KV16_D256_full.dat', 'plots/h200/hopper-shapes/data/panel_H16_KV8_D256_full.dat', 'plots/h200/hopper-shapes/data/panel_H16_KV16_D256_causal.dat', 'plots/h200/hopper-shapes/data/panel_H16_KV8_D256_causal.dat']
array panel_title[18] = ['H=32, D=64, non-causal', 'H=16, D=64, causal', 'H=32, D=64, causal', 'H=16, D=96, non-causal', 'H=16, D=96, causal', 'H=16, D=128, non-causal', 'H=64 KV=8, D=128, non-causal', 'H=16, D=128, causal', 'H=16 KV=1 (MQA), D=128, causal', 'H=32 KV=8, D=128, causal', 'H=32 KV=8, D=128, causal, varlen uniform:0', 'H=64 KV=8, D=128, causal', 'H=16, D=192, non-causal', 'H=16, D=192, causal', 'H=16, D=256, non-causal', 'H=16 KV=8, D=256, non-causal', 'H=16, D=256, causal', 'H=16 KV=8, D=256, causal']
nvariants = 2
array variant_name[2] = ['flash_hopper', 'cudnn_sdpa']
npeers = 0
array variant_peer[2] = [0, 0]
array variant_colour[2] = [1, 2]
have_cudnn = 1
have_naive = 0
seq_min = 512
seq_max = 16384
array panel_n_ms[18] = [12, 2, 12, 6, 6, 12, 2, 12, 8, 8, 2, 8, 6, 10, 6, 8, 6, 8]
array panel_n_tflops[18] = [12, 2, 12, 6, 6, 12, 2, 12, 8, 8, 2, 8, 6, 10, 6, 8, 6, 8]
array panel_n_mem[18] = [12, 2, 12, 6, 6, 12, 2, 12, 8, 8, 2, 8, 6, 10, 6, 8, 6, 8]
array panel_n_naive[18] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
array panel_n_energy[18] = [12, 2, 12, 6, 6, 12, 2, 12, 8, 8, 2, 8, 6, 10, 6, 8, 6, 8]
have_energy = 1
headline_n = 1
array headline_show[2] = [1, 0]
array panel_n_headline[18] = [6, 1, 6, 3, 3, 6, 1, 6, 4, 4, 1, 4, 3, 5, 3, 4, 3, 4]
headline_ymin = 0.921488
headline_ymax = 1.33072
headline_note = ''
peak_tflops = NaN
tflops_max = 808.32
mem_unit = 'MiB'
mem_per_unit = 1
mem_max = 4.00024
mem_note = 'on the zero line: flash_hopper (at most 0 MiB at any S)'
have_torch = 0
array panel_n_torch[18] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
torch_ymax = 1.1
torch_note = ''
have_ratio = 0
baseline = ''
