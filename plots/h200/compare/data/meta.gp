# written by build/report data; strings from the data are single-quoted (gp_quote)
run = 'results/h200/compare/20261203T161543Z.csv'
run_id = '20261203T161543Z'
gpu = 'h200'
gpu_name = 'NVIDIA H200'
mode = 'cold'
grid_shape = 'batch = tokens / S (per panel), heads per panel, bf16'
grid_note = 'batch = tokens / S (per panel), heads per panel, bf16, cold mode, sustained, init=normal'
kinds_note = 'sustained, init=normal'
kinds_note_all = 'sustained, init=normal'
figure_page = 1
figure_pages = 1
npanels = 13
array panel_file[13] = ['plots/h200/compare/data/panel_H32_KV32_D64_full.dat', 'plots/h200/compare/data/panel_H16_KV16_D64_causal.dat', 'plots/h200/compare/data/panel_H32_KV32_D64_causal.dat', 'plots/h200/compare/data/panel_H16_KV16_D128_full.dat', 'plots/h200/compare/data/panel_H64_KV8_D128_full.dat', 'plots/h200/compare/data/panel_H16_KV16_D128_causal.dat', 'plots/h200/compare/data/panel_H16_KV1_D128_causal.dat', 'plots/h200/compare/data/panel_H32_KV8_D128_causal.dat', 'plots/h200/compare/data/panel_H32_KV8_D128_causal_varlen-uniform-0.dat', 'plots/h200/compare/data/panel_H64_KV8_D128_causal.dat', 'plots/h200/compare/data/panel_H16_KV16_D192_causal.dat', 'plots/h200/compare/data/panel_H16_KV8_D256_full.dat', 'plots/h200/compare/data/panel_H16_KV8_D256_causal.dat']
array panel_title[13] = ['H=32, D=64, non-causal', 'H=16, D=64, causal', 'H=32, D=64, causal', 'H=16, D=128, non-causal', 'H=64 KV=8, D=128, non-causal', 'H=16, D=128, causal', 'H=16 KV=1 (MQA), D=128, causal', 'H=32 KV=8, D=128, causal', 'H=32 KV=8, D=128, causal, varlen uniform:0', 'H=64 KV=8, D=128, causal', 'H=16, D=192, causal', 'H=16 KV=8, D=256, non-causal', 'H=16 KV=8, D=256, causal']
nvariants = 4
array variant_name[4] = ['flash_hopper', 'fa4', 'cudnn_sdpa', 'torch_sdpa_cudnn']
npeers = 1
array variant_peer[4] = [0, 0, 0, 1]
array variant_dash[4] = ['solid', 'solid', 'solid', '(12, 6)']
array variant_rgb[4] = ['#d55e00', '#ddcc77', '#009e73', '#00674b']
array variant_pt[4] = [13, 5, 9, 8]
array variant_pt_filled[4] = [13, 5, 9, 9]
array variant_pt_open[4] = [12, 4, 8, 8]
array variant_ps[4] = [1.1, 1.0, 1.1, 1.2]
have_cudnn = 1
have_naive = 0
seq_min = 512
seq_max = 16384
seq_pad = 0.4
array panel_n_ms[13] = [24, 4, 24, 24, 4, 24, 16, 16, 3, 16, 16, 16, 16]
array legend_ms[4] = [1, 1, 1, 1]
array panel_n_tflops[13] = [24, 4, 24, 24, 4, 24, 16, 16, 3, 16, 16, 16, 16]
array legend_tflops[4] = [1, 1, 1, 1]
array panel_n_mem[13] = [24, 4, 24, 24, 4, 24, 16, 16, 3, 16, 16, 16, 16]
array legend_mem[4] = [1, 1, 1, 1]
array panel_n_naive[13] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]
array legend_naive[4] = [0, 0, 0, 0]
array panel_n_energy[13] = [24, 4, 24, 24, 4, 24, 16, 16, 3, 16, 16, 16, 16]
array legend_energy[4] = [1, 1, 1, 1]
have_energy = 1
headline_n = 3
array headline_show[4] = [1, 1, 0, 1]
array panel_n_headline[13] = [18, 3, 18, 18, 3, 18, 12, 12, 2, 12, 12, 12, 12]
array legend_headline[4] = [1, 1, 0, 1]
headline_ymin = 0.688838
headline_ymax = 1.4068
headline_note = ''
headline_bars = 1
array panel_bars[13] = ['1 2 4', '1 2 4', '1 2 4', '1 2 4', '1 2 4', '1 2 4', '1 2 4', '1 2 4', '1 2', '1 2 4', '1 2 4', '1 2 4', '1 2 4']
headline_how = 'interleaved ratios: Hodges–Lehmann of the samples, bars the 98 % interval (bounds at 99 %, the gate'."'".'s)'
headline_level = '98 %'
label_w = 0.07
label_h = 0.05
peak_tflops = NaN
tflops_max = 744.61
mem_unit = 'MiB'
mem_per_unit = 1
mem_max = 512
mem_note = 'on the zero line: flash_hopper, cudnn_sdpa (at most 2 MiB at any S)'
have_torch = 1
array panel_n_torch[13] = [18, 3, 18, 18, 3, 18, 12, 12, 0, 12, 12, 12, 12]
array legend_torch[4] = [1, 1, 1, 0]
torch_ymax = 1.39955
torch_note = 'fastest PyTorch peer: torch_sdpa_cudnn at all 50 points'
have_ratio = 0
baseline = ''
ratio_why = 'no baseline given'
